"""dpgui.core"""
