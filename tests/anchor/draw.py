"""draw.py -- the seeded draws the fuzz generators (select/fuzz.py, task/fuzz.py) share.

Every draw goes through random.Random(seed).random() only (Mersenne Twister, the same in every
Python 3), so a seed and a count always give the same stream.
"""

import random


class Draw:
    """Draws on one random.Random, only through random() (stable across Python versions)."""

    def __init__(self, seed):
        self.rng = random.Random(seed)

    def chance(self, p):
        return self.rng.random() < p

    def int(self, lo, hi):
        """An integer in lo..hi, inclusive."""
        return lo + int(self.rng.random() * (hi - lo + 1))

    def pick(self, items):
        return items[int(self.rng.random() * len(items))]

    def weighted(self, pairs):
        """One of the values of (weight, value) pairs."""
        total = sum(w for w, _ in pairs)
        r = self.rng.random() * total
        for w, v in pairs:
            if r < w:
                return v
            r -= w
        return pairs[-1][1]
