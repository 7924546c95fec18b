//! A bounds-checked reader over Kafka's non-flexible primitive types.

use super::CodecError;

pub(super) struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(super) fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf }
    }

    fn take(&mut self, field: &'static str, n: usize) -> Result<&'a [u8], CodecError> {
        if self.buf.len() < n {
            return Err(CodecError::Truncated { field, needed: n, remaining: self.buf.len() });
        }
        let (head, tail) = self.buf.split_at(n);
        self.buf = tail;
        Ok(head)
    }

    pub(super) fn i16(&mut self, field: &'static str) -> Result<i16, CodecError> {
        let b = self.take(field, 2)?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }

    pub(super) fn i32(&mut self, field: &'static str) -> Result<i32, CodecError> {
        let b = self.take(field, 4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub(super) fn nullable_string(&mut self, field: &'static str) -> Result<Option<String>, CodecError> {
        let length = self.i16(field)?;
        if length == -1 {
            return Ok(None);
        }
        let length = usize::try_from(length)
            .map_err(|_| CodecError::InvalidLength { field, length: length.into() })?;
        let bytes = self.take(field, length)?;
        let s = std::str::from_utf8(bytes).map_err(|_| CodecError::InvalidUtf8 { field })?;
        Ok(Some(s.to_owned()))
    }

    pub(super) fn string(&mut self, field: &'static str) -> Result<String, CodecError> {
        self.nullable_string(field)?.ok_or(CodecError::InvalidLength { field, length: -1 })
    }

    pub(super) fn nullable_bytes(&mut self, field: &'static str) -> Result<Option<Vec<u8>>, CodecError> {
        let length = self.i32(field)?;
        if length == -1 {
            return Ok(None);
        }
        let length = usize::try_from(length).map_err(|_| CodecError::InvalidLength { field, length })?;
        Ok(Some(self.take(field, length)?.to_vec()))
    }

    /// Reads a non-nullable array count, refusing one that `min_element_size`-byte
    /// elements could not fill from what remains, so a hostile count never
    /// reserves memory.
    pub(super) fn array_len(
        &mut self,
        field: &'static str,
        min_element_size: usize,
    ) -> Result<usize, CodecError> {
        let count = self.i32(field)?;
        let n = usize::try_from(count).map_err(|_| CodecError::InvalidLength { field, length: count })?;
        if n.saturating_mul(min_element_size) > self.buf.len() {
            return Err(CodecError::CountTooLarge { field, count, remaining: self.buf.len() });
        }
        Ok(n)
    }

    pub(super) fn array<T>(
        &mut self,
        field: &'static str,
        min_element_size: usize,
        mut element: impl FnMut(&mut Self) -> Result<T, CodecError>,
    ) -> Result<Vec<T>, CodecError> {
        let n = self.array_len(field, min_element_size)?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            out.push(element(self)?);
        }
        Ok(out)
    }
}
