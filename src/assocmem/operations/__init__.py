"""What `Memory`'s groups of operations stand on (`base.py`); each capability's group
lives in its folder (`trust/operations.py`…), and `Memory` composes them (the API tier)."""
