""""Is A really better than B?" (pages/paired_compare.py): the whole-split run, α, words, views."""
