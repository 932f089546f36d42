//! An append-only vector kept in chunks of a fixed size, for the graph's per-state and
//! per-transition tables and the frontier's levels. A `Vec` grows by doubling: at its peak it
//! holds up to twice what it needs, and while it grows the old and the new buffers are both
//! resident. A graph of ten million states spends more on that slack than on some of its
//! tables; a chunked vector wastes at most one chunk.

use std::ops::Index;

/// Elements per chunk: 64 Ki (512 KiB of 8-byte entries).
const CHUNK: usize = 1 << 16;

pub(in crate::check) struct Chunked<T> {
    chunks: Vec<Vec<T>>,
    len: usize,
}

impl<T> Default for Chunked<T> {
    fn default() -> Self {
        Chunked { chunks: Vec::new(), len: 0 }
    }
}

impl<T> Chunked<T> {
    pub(in crate::check) fn push(&mut self, value: T) {
        match self.chunks.last_mut() {
            Some(chunk) if chunk.len() < CHUNK => chunk.push(value),
            _ => {
                let mut chunk = Vec::with_capacity(CHUNK);
                chunk.push(value);
                self.chunks.push(chunk);
            }
        }
        self.len += 1;
    }

    pub(in crate::check) fn len(&self) -> usize {
        self.len
    }

    pub(in crate::check) fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The elements in order, each chunk freed once read.
impl<T> IntoIterator for Chunked<T> {
    type Item = T;
    type IntoIter = std::iter::Flatten<std::vec::IntoIter<Vec<T>>>;

    fn into_iter(self) -> Self::IntoIter {
        self.chunks.into_iter().flatten()
    }
}

impl<T> Index<usize> for Chunked<T> {
    type Output = T;

    fn index(&self, i: usize) -> &T {
        &self.chunks[i / CHUNK][i % CHUNK]
    }
}

impl<T> FromIterator<T> for Chunked<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut chunked = Chunked::default();
        iter.into_iter().for_each(|value| chunked.push(value));
        chunked
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_are_read_back_across_chunk_boundaries() {
        let n = 2 * CHUNK + 3;
        let chunked: Chunked<usize> = (0..n).map(|i| i * 7).collect();
        assert_eq!(chunked.len(), n);
        for i in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK, n - 1] {
            assert_eq!(chunked[i], i * 7, "element {i}");
        }
        assert_eq!(chunked.chunks.len(), 3, "one chunk started only when the last is full");
        assert!(chunked.into_iter().eq((0..n).map(|i| i * 7)), "read back in order");
    }
}
