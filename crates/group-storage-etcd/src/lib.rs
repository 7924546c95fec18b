//! A [`MetadataStore`](group_offsets::MetadataStore) over an etcd v3 cluster.
