"""Settings, the config file, and rules, hooks and MCP servers as data. Kept empty: importing a
submodule (say config.rules) must not build the Settings class."""
