"""dpgui.app"""
