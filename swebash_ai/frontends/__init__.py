"""The front ends: the command line (the composition root), one-shot, shell mode, `mcp serve`, the TUI."""
