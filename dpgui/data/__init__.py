"""dpgui.data"""
