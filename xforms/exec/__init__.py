"""What happens around a compiled call: tiered execution, the fast tier's cost model, the
executable cache, the compile worker's client.
"""
