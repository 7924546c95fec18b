//! The process-wide registry of assignors by protocol name.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock, RwLock};

use crate::{
    AssignError, CooperativeStickyAssignor, PartitionAssignor, RangeAssignor, RoundRobinAssignor,
    StickyAssignor,
};

/// Built-in names; they cannot be replaced.
const BUILT_IN: [&str; 4] = ["range", "roundrobin", "sticky", "cooperative-sticky"];

fn user_assignors() -> &'static RwLock<BTreeMap<String, Arc<dyn PartitionAssignor>>> {
    static REGISTRY: OnceLock<RwLock<BTreeMap<String, Arc<dyn PartitionAssignor>>>> = OnceLock::new();
    REGISTRY.get_or_init(|| RwLock::new(BTreeMap::new()))
}

/// The assignor registered under `name`: one of the built-ins (`"range"`,
/// `"roundrobin"`, `"sticky"`, `"cooperative-sticky"`) or one added with
/// [`register_assignor`]. `None` for an unknown name.
///
/// ```
/// let range = group_assignors::get_assignor("range").expect("built in");
/// assert_eq!(range.name(), "range");
/// assert!(group_assignors::get_assignor("no-such-assignor").is_none());
/// ```
pub fn get_assignor(name: &str) -> Option<Arc<dyn PartitionAssignor>> {
    match name {
        "range" => Some(Arc::new(RangeAssignor)),
        "roundrobin" => Some(Arc::new(RoundRobinAssignor)),
        "sticky" => Some(Arc::new(StickyAssignor)),
        "cooperative-sticky" => Some(Arc::new(CooperativeStickyAssignor)),
        _ => user_assignors().read().unwrap_or_else(|e| e.into_inner()).get(name).cloned(),
    }
}

/// Registers a user assignor under its [`name`](PartitionAssignor::name) in
/// the process-wide registry, so [`get_assignor`] finds it (the Go API's
/// global registry, made thread-safe). Registrations last for the life of the
/// process.
///
/// Fails with [`AssignError::InvalidAssignorName`] for an empty name and with
/// [`AssignError::AssignorAlreadyRegistered`] for a built-in name or one
/// registered before (replacing an assignor under a live group would change
/// its protocol silently).
pub fn register_assignor(assignor: Arc<dyn PartitionAssignor>) -> Result<(), AssignError> {
    let name = assignor.name().to_owned();
    if name.is_empty() {
        return Err(AssignError::InvalidAssignorName);
    }
    if BUILT_IN.contains(&name.as_str()) {
        return Err(AssignError::AssignorAlreadyRegistered { name });
    }
    let mut map = user_assignors().write().unwrap_or_else(|e| e.into_inner());
    if map.contains_key(&name) {
        return Err(AssignError::AssignorAlreadyRegistered { name });
    }
    map.insert(name, assignor);
    Ok(())
}
