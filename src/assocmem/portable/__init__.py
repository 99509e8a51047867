"""A whole store moved out and back in: the export line format and the transfer."""
