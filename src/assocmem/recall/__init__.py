"""Recall: a read request, its arms, their fusion and ranking, evidence gates, the soft read."""
