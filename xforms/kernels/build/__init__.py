"""Source -> module -> dispatcher: the content-addressed cache on disk (`codecache`), the
direct LLVM path's object code on disk (`object_cache`), the rules both follow
(`cache_rules`) and the compile worker's main.
"""
