"""Plan -> loop IR -> text: the backend-neutral loop IR, its shared printer core and the scalar
rules of fused loops.
"""
