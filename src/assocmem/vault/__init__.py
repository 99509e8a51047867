"""The vault room: a folder of Markdown notes indexed as a second brain, and its upkeep.

`notes` walks and parses, `index` keeps the store in step incrementally, `tools`
answers the thinking tools, `maintain` reports chores and applies the one fix.
"""
