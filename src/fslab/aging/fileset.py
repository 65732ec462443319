"""The aging engine's file set: which file indices exist, and the one nearest a draw."""

from __future__ import annotations


class FileSet:
    """Which file indices exist, with O(1) add, remove and random pick, and the existing
    (or free) index nearest a drawn one, found by memchr over a presence map."""

    def __init__(self, capacity: int) -> None:
        self.items: list[int] = []
        self.where: dict[int, int] = {}
        self.present = bytearray(capacity)

    def add(self, index: int) -> None:
        if index not in self.where:
            self.where[index] = len(self.items)
            self.items.append(index)
            self.present[index] = 1

    def discard(self, index: int) -> None:
        position = self.where.pop(index, None)
        if position is None:
            return
        self.present[index] = 0
        last = self.items.pop()
        if position < len(self.items):
            self.items[position] = last
            self.where[last] = position

    def near(self, index: int) -> int | None:
        """The existing file nearest `index` (None when there is none)."""
        return self._nearest(index, 1) if self.items else None

    def free_near(self, index: int) -> int | None:
        """The free index nearest `index` (None when every index holds a file)."""
        return self._nearest(index, 0) if len(self.items) < len(self.present) else None

    def _nearest(self, index: int, value: int) -> int | None:
        present = self.present
        if present[index] == value:
            return index
        up, down = present.find(value, index), present.rfind(value, 0, index)
        if up < 0 or down < 0:
            return up if up >= 0 else (down if down >= 0 else None)
        return up if up - index <= index - down else down
