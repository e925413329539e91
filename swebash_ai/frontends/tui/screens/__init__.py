"""Screens (modals) of the TUI."""
