//! What the node knows of the cluster, for the Kafka front end: the live nodes
//! (Metadata) and the owner of each partition (FindCoordinator).

use std::sync::{Arc, PoisonError, RwLock};

use group_offsets::CoordinatorPartition;

use crate::plan::Observation;

/// A node as clients reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeAddress {
    /// The node id.
    pub node_id: i32,
    /// The advertised host.
    pub host: String,
    /// The advertised port.
    pub port: i32,
}

impl NodeAddress {
    /// Parses an advertised `host:port` (`[v6]:port` too); `None` when it is not one.
    pub fn parse(node_id: i32, advertised: &str) -> Option<NodeAddress> {
        let (host, port) = advertised.rsplit_once(':')?;
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let port: u16 = port.parse().ok()?;
        (!host.is_empty()).then(|| NodeAddress { node_id, host: host.to_owned(), port: i32::from(port) })
    }
}

/// The latest reading of the cluster's keys, shared with the front end; cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct ClusterView {
    seen: Arc<RwLock<Observation>>,
}

impl ClusterView {
    pub(crate) fn update(&self, observed: Observation) {
        *self.seen.write().unwrap_or_else(PoisonError::into_inner) = observed;
    }

    fn read<T>(&self, f: impl FnOnce(&Observation) -> T) -> T {
        f(&self.seen.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Every live node, by id.
    pub fn nodes(&self) -> Vec<NodeAddress> {
        self.read(|o| o.nodes.iter().filter_map(|(&id, a)| NodeAddress::parse(id, a)).collect())
    }

    /// The node that owns `partition`, if one does and is live.
    pub fn owner_of(&self, partition: CoordinatorPartition) -> Option<NodeAddress> {
        self.read(|o| {
            let owner = o.owners.get(&partition.0)?;
            NodeAddress::parse(owner.node_id, o.nodes.get(&owner.node_id)?)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("127.0.0.1:9092", Some(("127.0.0.1", 9092)))]
    #[case("[::1]:9092", Some(("::1", 9092)))]
    #[case("broker-3.example:19092", Some(("broker-3.example", 19092)))]
    #[case("no-port", None)]
    #[case(":9092", None)]
    #[case("host:99999", None)]
    fn advertised_addresses_parse(#[case] text: &str, #[case] want: Option<(&str, i32)>) {
        let got = NodeAddress::parse(4, text).map(|a| (a.host, a.port));
        assert_eq!(got, want.map(|(h, p)| (h.to_owned(), p)));
    }
}
