"""dpgui.report"""
