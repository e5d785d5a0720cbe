"""Jaxpr -> Plan: what fuses into which loop, views as index maps, stencils, buffer storage.
"""
