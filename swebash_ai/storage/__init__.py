"""Where the app keeps its files, and the one private-file writer every write goes through."""
