"""Source -> module -> dispatcher: the content-addressed cache on disk and the compile worker's
main.
"""
