"""occupancy"""
