//! `StickyAssignorUserData`: how the eager sticky assignor carries a member's
//! previous assignment and generation in its subscription's user data.

use std::sync::Arc;

use group_types::TopicPartition;

use crate::AssignError;

/// The user data of Kafka's eager `StickyAssignor` (assignors.md 4.3):
///
/// ```text
/// v1 := previous_assignment: ARRAY of { topic: STRING, partitions: ARRAY of INT32 }, generation: INT32
/// v0 := previous_assignment only
/// ```
///
/// ```
/// use group_assignors::StickyAssignorUserData;
/// use group_types::TopicPartition;
///
/// let data = StickyAssignorUserData {
///     previous_assignment: vec![TopicPartition::new("t", 0), TopicPartition::new("t", 1)],
///     generation: Some(4),
/// };
/// assert_eq!(StickyAssignorUserData::decode(&data.encode())?, data);
/// # Ok::<(), group_assignors::AssignError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StickyAssignorUserData {
    /// The partitions the member was last assigned.
    pub previous_assignment: Vec<TopicPartition>,
    /// The generation of that assignment; `None` for a v0 blob.
    pub generation: Option<i32>,
}

impl StickyAssignorUserData {
    /// Encodes as v1 when a generation is set, else as v0. Partitions of a
    /// topic are grouped in order of first appearance.
    pub fn encode(&self) -> Vec<u8> {
        let mut groups: Vec<(&Arc<str>, Vec<i32>)> = Vec::new();
        for tp in &self.previous_assignment {
            match groups.iter_mut().find(|(t, _)| **t == tp.topic) {
                Some((_, ps)) => ps.push(tp.partition),
                None => groups.push((&tp.topic, vec![tp.partition])),
            }
        }
        let mut out = Vec::new();
        out.extend_from_slice(&(groups.len() as i32).to_be_bytes());
        for (topic, ps) in groups {
            out.extend_from_slice(&(topic.len() as i16).to_be_bytes());
            out.extend_from_slice(topic.as_bytes());
            out.extend_from_slice(&(ps.len() as i32).to_be_bytes());
            for p in ps {
                out.extend_from_slice(&p.to_be_bytes());
            }
        }
        if let Some(g) = self.generation {
            out.extend_from_slice(&g.to_be_bytes());
        }
        out
    }

    /// Decodes a v1 blob, or a v0 blob (no trailing generation).
    pub fn decode(bytes: &[u8]) -> Result<StickyAssignorUserData, AssignError> {
        let mut r = Reader { bytes, at: 0 };
        let topics = r.len()?;
        let mut previous_assignment = Vec::new();
        for _ in 0..topics {
            let n = r.i16()?;
            let n = usize::try_from(n).map_err(|_| AssignError::InvalidUserData { reason: "null topic" })?;
            let name = std::str::from_utf8(r.take(n)?)
                .map_err(|_| AssignError::InvalidUserData { reason: "topic is not UTF-8" })?;
            let topic: Arc<str> = Arc::from(name);
            for _ in 0..r.len()? {
                previous_assignment.push(TopicPartition { topic: Arc::clone(&topic), partition: r.i32()? });
            }
        }
        let generation = match bytes.len() - r.at {
            0 => None,
            4 => Some(r.i32()?),
            _ => return Err(AssignError::InvalidUserData { reason: "trailing bytes" }),
        };
        Ok(StickyAssignorUserData { previous_assignment, generation })
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], AssignError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or(AssignError::InvalidUserData { reason: "truncated" })?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn i16(&mut self) -> Result<i16, AssignError> {
        let b = self.take(2)?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }

    fn i32(&mut self) -> Result<i32, AssignError> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// An array length; negative (null) arrays are rejected, and a length
    /// larger than the remaining bytes could hold is rejected before allocating.
    fn len(&mut self) -> Result<usize, AssignError> {
        let n = self.i32()?;
        let n = usize::try_from(n).map_err(|_| AssignError::InvalidUserData { reason: "null array" })?;
        if n > self.bytes.len() - self.at {
            return Err(AssignError::InvalidUserData { reason: "array longer than the data" });
        }
        Ok(n)
    }
}
