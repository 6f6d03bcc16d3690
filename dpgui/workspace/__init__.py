"""The workspace model (Qt-free): docs/design.md, "Layers and data flow"."""
