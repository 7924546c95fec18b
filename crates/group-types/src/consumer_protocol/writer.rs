//! Writing Kafka's non-flexible primitive types.

use super::CodecError;

pub(super) struct Writer<'a> {
    out: &'a mut Vec<u8>,
}

impl<'a> Writer<'a> {
    pub(super) fn new(out: &'a mut Vec<u8>) -> Writer<'a> {
        Writer { out }
    }

    pub(super) fn i16(&mut self, v: i16) {
        self.out.extend_from_slice(&v.to_be_bytes());
    }

    pub(super) fn i32(&mut self, v: i32) {
        self.out.extend_from_slice(&v.to_be_bytes());
    }

    pub(super) fn string(&mut self, field: &'static str, s: &str) -> Result<(), CodecError> {
        let length = i16::try_from(s.len()).map_err(|_| CodecError::TooLong { field, length: s.len() })?;
        self.i16(length);
        self.out.extend_from_slice(s.as_bytes());
        Ok(())
    }

    pub(super) fn nullable_string(&mut self, field: &'static str, s: Option<&str>) -> Result<(), CodecError> {
        match s {
            Some(s) => self.string(field, s),
            None => {
                self.i16(-1);
                Ok(())
            }
        }
    }

    pub(super) fn nullable_bytes(&mut self, field: &'static str, b: Option<&[u8]>) -> Result<(), CodecError> {
        match b {
            Some(b) => {
                self.array_len(field, b.len())?;
                self.out.extend_from_slice(b);
            }
            None => self.i32(-1),
        }
        Ok(())
    }

    pub(super) fn array_len(&mut self, field: &'static str, len: usize) -> Result<(), CodecError> {
        let n = i32::try_from(len).map_err(|_| CodecError::TooLong { field, length: len })?;
        self.i32(n);
        Ok(())
    }
}
