"""The subcommands that are not front ends: doctor, export, setup, rules, mcp."""
