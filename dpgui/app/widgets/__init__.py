"""Small widgets and looks shared by every page: validated fields, the wheel guard, plot style, theme."""
