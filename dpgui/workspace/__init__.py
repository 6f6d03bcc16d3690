"""The workspace model (Qt-free): docs/architecture.md, "The layers"."""
