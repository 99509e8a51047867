"""What the memory learns: co-occurrence links, expansion along them,
and the lessons outcomes teach.
"""
