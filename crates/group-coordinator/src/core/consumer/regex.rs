//! Regular-expression subscriptions (§6): validated when a member introduces a
//! regex nobody in the group uses, resolved against the metadata image as a write
//! of its own after the heartbeat that asked for it, at most every 10 s per group.
//!
//! Kafka compiles with RE2/J and matches with its `matches()`, the whole topic
//! name; `re2j.rs` accepts and refuses what RE2/J does and rewrites the pattern
//! for the `regex` crate, anchored as `\A(?:...)\z` to match whole names.

use std::sync::Arc;

use group_offsets::{ConsumerGroupMetadataValue, ModernGroupRecord, RegularExpressionValue};
use group_types::ErrorCode;

use super::Work;
use super::group::{ConsumerGroup, ConsumerMember};
use super::re2j::{self, Re2jError};
use crate::core::CoordinatorCore;

/// Kafka's `REGEX_BATCH_REFRESH_MIN_INTERVAL_MS`.
const MIN_REFRESH_INTERVAL_MS: i64 = 10_000;

/// Longest regex source accepted, and the compiled size limit: a regex is
/// client input, and compiling one must stay cheap.
const MAX_REGEX_LEN: usize = 4_096;
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// What step 8 did (`UpdateRegularExpressionsResult`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RegexChange {
    NoChange,
    /// A regex not resolved yet: the bump waits for its resolution.
    Updated,
    /// The member's topics changed at once (a regex already resolved, or none).
    UpdatedAndResolved,
}

/// Why a `SubscribedTopicRegex` is refused: as RE2/J refuses it, or, for one
/// RE2/J accepts, a limit of ours (a regex is client input, and compiling one
/// must stay cheap). Displayed as the description Kafka's
/// INVALID_REGULAR_EXPRESSION message carries.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum RegexRefusal {
    /// RE2/J's parser refuses it.
    #[error(transparent)]
    Syntax(#[from] Re2jError),
    /// Longer than `MAX_REGEX_LEN` bytes (Kafka sets no limit).
    #[error("longer than {MAX_REGEX_LEN} bytes")]
    TooLong,
    /// Accepted by RE2/J, but larger compiled than `REGEX_SIZE_LIMIT` (RE2/J
    /// sets no limit): a large Unicode class repeated hundreds of times
    /// (`\pL{1000}` takes 64 MiB and most of a second to compile).
    #[error("expression too large")]
    TooLarge,
    /// Accepted by RE2/J, but nested deeper than the `regex` crate's limit of 250
    /// groups or repetitions (RE2/J sets none).
    #[error("expression nests too deeply")]
    TooDeep,
}

/// The whole-name matcher for `source` (RE2/J's `matches()`), or why it is refused.
pub(crate) fn compile(source: &str) -> Result<regex::Regex, RegexRefusal> {
    if source.len() > MAX_REGEX_LEN {
        return Err(RegexRefusal::TooLong);
    }
    let translated = re2j::translate(source)?;
    regex::RegexBuilder::new(&format!(r"\A(?:{translated})\z")).size_limit(REGEX_SIZE_LIMIT).build().map_err(
        |e| match e {
            regex::Error::CompiledTooBig(_) => RegexRefusal::TooLarge,
            _ => RegexRefusal::TooDeep,
        },
    )
}

impl CoordinatorCore {
    /// Step 8 (`maybeUpdateRegularExpressions`): a tombstone for a regex the
    /// member was the last to use, whether its topics changed now or later, and
    /// whether the group's regexes must be resolved after this heartbeat (decided
    /// on the group as it was before the heartbeat's regex changes, as Kafka does).
    pub(crate) fn update_regexes(
        &mut self,
        work: &mut Work,
        stored: &ConsumerMember,
        updated: &ConsumerMember,
    ) -> Result<RegexChange, (ErrorCode, Option<String>)> {
        let (old, new) = (stored.regex(), updated.regex());
        if old == new {
            let due = self.regex_refresh_due(&work.cg, false);
            work.set_regex_refresh_due(due);
            work.regex_task =
                due.then(|| subscribed_regexes(&work.cg).into_iter().map(str::to_owned).collect());
            return Ok(RegexChange::NoChange);
        }
        let introduced = new.is_some_and(|new| work.cg.regex_unused_by_others(new, &updated.id));
        if let Some(new) = new
            && introduced
            && let Err(reason) = compile(new)
        {
            return Err((
                ErrorCode::InvalidRegularExpression,
                Some(format!("SubscribedTopicRegex `{new}` is not a valid regular expression: {reason}.")),
            ));
        }
        let due = self.regex_refresh_due(&work.cg, introduced);
        work.set_regex_refresh_due(due);
        work.regex_task = due.then(|| subscribed_regexes(&work.cg).into_iter().map(str::to_owned).collect());
        // Kafka writes the tombstone whether the regex was resolved or not.
        if let Some(old) = old
            && work.cg.regex_unused_by_others(old, &updated.id)
        {
            work.emit(ModernGroupRecord::RegularExpression {
                group_id: work.group_id.clone(),
                regex: Arc::from(old),
                value: None,
            });
        }
        Ok(match new {
            Some(new) if !introduced && work.cg.regexes.contains_key(new) => RegexChange::UpdatedAndResolved,
            Some(_) => RegexChange::Updated,
            // 4.2 (KAFKA-19891): clearing a regex changes the member's topics at once.
            None => RegexChange::UpdatedAndResolved,
        })
    }

    /// §6.3: whether the regexes of `cg` (its members updated, its resolutions
    /// not yet) are resolved after this heartbeat: a regex is new to the group,
    /// one is unresolved, topics were created since the last resolution, or it is
    /// older than the refresh interval; never within 10 s of the last one.
    fn regex_refresh_due(&self, cg: &ConsumerGroup, introduced: bool) -> bool {
        // The count the group keeps says "no regex" without the scan of every
        // member, which made each writing heartbeat of a large group O(members).
        if cg.regex_subscribers == 0 {
            return false;
        }
        let now = self.engine.now;
        let subscribed = subscribed_regexes(cg);
        // The last resolution is the one the group's resolved regexes carry: with
        // none, the group may resolve at once.
        let resolved_at = cg.regexes_resolved_at();
        if resolved_at.is_some_and(|at| now <= at + MIN_REFRESH_INTERVAL_MS) {
            return false;
        }
        let refresh_interval = self.engine.config.consumer.regex_refresh_interval_ms;
        introduced
            // Kafka compares counts: some regex is unresolved (or one resolved is
            // no longer subscribed, its tombstone not yet written).
            || subscribed.len() != cg.regexes.len()
            || cg.regexes_image_version() < self.engine.image_with_new_topics
            || resolved_at.is_none_or(|at| now > at + refresh_interval)
    }

    /// After a heartbeat that asked for it (`regex_refresh_due`), resolves every
    /// regex of the group together, as Kafka's executor task does right after the
    /// heartbeat. The result is its own write: a RegularExpression record per
    /// regex, and a bump if any topic set or the metadata hash changed.
    ///
    /// Only topics `visible` accepts (those the triggering member may describe)
    /// are candidates; internal topics are, as in Kafka.
    pub(crate) fn maybe_resolve_regexes(&mut self, group_id: &str, visible: &dyn Fn(&str) -> bool) {
        let Some(cg) = self.consumer_group_ref(group_id) else { return };
        if !cg.regex_refresh_due {
            return;
        }
        let sources: Vec<String> = subscribed_regexes(cg).into_iter().map(str::to_owned).collect();
        let resolved = self.resolve_regexes(sources, visible);
        self.apply_resolved_regexes(group_id, resolved);
    }

    /// A heartbeat that scheduled the regex task at step 8 failed later (an
    /// assignor failure, a fenced epoch): Kafka's task was scheduled then, and
    /// runs whatever became of the heartbeat, over the regexes `sources` it was
    /// given; those nobody subscribes to any more are skipped when applied.
    pub(crate) fn resolve_regexes_of_failed_request(
        &mut self,
        group_id: &str,
        sources: Vec<String>,
        visible: &dyn Fn(&str) -> bool,
    ) {
        let resolved = self.resolve_regexes(sources, visible);
        self.apply_resolved_regexes(group_id, resolved);
    }

    /// The task (`TopicRegexResolver.resolveRegularExpressions`): each regex of
    /// `sources` with the topics of the image it matches whole.
    fn resolve_regexes(&self, sources: Vec<String>, visible: &dyn Fn(&str) -> bool) -> Box<ResolvedRegexes> {
        let image = &self.engine.image;
        let regexes = sources
            .into_iter()
            .map(|source| {
                // A regex is validated when a member introduces it; one that does
                // not compile here is resolved to nothing, as Kafka ignores it.
                let mut matched: Vec<String> = match compile(&source) {
                    Ok(re) => image
                        .topics()
                        .filter(|t| re.is_match(&t.name) && visible(&t.name))
                        .map(|t| t.name.to_string())
                        .collect(),
                    Err(_) => Vec::new(),
                };
                matched.sort();
                (source, matched)
            })
            .collect();
        Box::new(ResolvedRegexes {
            regexes,
            version: image.version(),
            timestamp_ms: self.engine.now,
            reapplied: false,
        })
    }

    /// The task's result applied (`handleRegularExpressionsResult`): a record
    /// per regex the group still subscribes to, and a bump if a topic set or the
    /// metadata hash changed, as a write of its own.
    fn apply_resolved_regexes(&mut self, group_id: &str, resolved: Box<ResolvedRegexes>) {
        self.engine.timeline.begin_step();
        let Some(mut work) = self.take_consumer(group_id) else { return };
        work.cg.regex_refresh_due = false;
        let mut changed = false;
        for (source, topics) in &resolved.regexes {
            if !work.cg.modern.members.values_any_order().any(|m| m.regex() == Some(source.as_str())) {
                continue;
            }
            if work.cg.regexes.get(source.as_str()).is_none_or(|old| old.topics != *topics) {
                changed = true;
            }
            work.emit(ModernGroupRecord::RegularExpression {
                group_id: work.group_id.clone(),
                regex: Arc::from(source.as_str()),
                value: Some(RegularExpressionValue {
                    topics: topics.clone(),
                    version: resolved.version,
                    timestamp_ms: resolved.timestamp_ms,
                }),
            });
        }
        let (hash_changed, hash) = self.refresh_subscription(&mut work);
        if changed || hash_changed {
            let epoch = work.cg.modern.group_epoch + 1;
            work.emit(ModernGroupRecord::GroupMetadata {
                group_id: work.group_id.clone(),
                value: Some(ConsumerGroupMetadataValue { epoch, metadata_hash: hash }),
            });
        }
        work.resolved = Some(resolved);
        self.commit_work(work, None);
    }

    /// The write of a resolution was voided: by the failure of the heartbeat
    /// written before it, as a rule. Kafka applies its task's result by a write
    /// of its own after that heartbeat's failure, so the result is applied again
    /// on the reverted group, once; a second failure drops it, as Kafka drops a
    /// result whose write fails (the next heartbeat asks again).
    pub(crate) fn regex_resolution_voided(&mut self, group_id: &str, resolved: Box<ResolvedRegexes>) {
        if resolved.reapplied {
            return;
        }
        let mut resolved = resolved;
        resolved.reapplied = true;
        self.apply_resolved_regexes(group_id, resolved);
    }
}

/// What Kafka's regex task computed: each regex with the topics it matched,
/// at one image version and time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResolvedRegexes {
    regexes: Vec<(String, Vec<String>)>,
    version: i64,
    timestamp_ms: i64,
    /// Applied again already after its first write was voided.
    reapplied: bool,
}

/// The regexes the members of `cg` subscribe to, sorted, once each.
fn subscribed_regexes(cg: &ConsumerGroup) -> Vec<&str> {
    let mut subscribed: Vec<&str> =
        cg.modern.members.values_any_order().filter_map(ConsumerMember::regex).collect();
    subscribed.sort_unstable();
    subscribed.dedup();
    subscribed
}

#[cfg(test)]
mod tests {
    use super::{RegexRefusal, compile};

    #[test]
    fn regexes_match_whole_names() {
        let re = compile("foo").unwrap();
        assert!(re.is_match("foo"));
        assert!(!re.is_match("foo-1"));
        let re = compile("foo.*|bar").unwrap();
        assert!(re.is_match("foo-1") && re.is_match("bar") && !re.is_match("xbar"));
    }

    /// Our limits on what RE2/J accepts (where we knowingly differ): the length,
    /// the compiled size, the nesting depth.
    #[test]
    fn our_limits_refuse_what_re2j_accepts() {
        assert!(compile(&"a".repeat(4_096)).is_ok());
        assert_eq!(compile(&"a".repeat(4_097)).unwrap_err(), RegexRefusal::TooLong);
        assert_eq!(compile("(((a{1000}){1000}){1000})").unwrap_err(), RegexRefusal::TooLarge);
        assert_eq!(compile("\\pL{1000}").unwrap_err(), RegexRefusal::TooLarge);
        assert_eq!(compile("\\W{0,1000}").unwrap_err(), RegexRefusal::TooLarge);
        assert!(compile("\\pL{10}").is_ok());
        let deep = format!("{}a{}", "(".repeat(300), ")".repeat(300));
        assert_eq!(compile(&deep).unwrap_err(), RegexRefusal::TooDeep);
        assert!(compile(&format!("{}a{}", "(".repeat(100), ")".repeat(100))).is_ok());
        assert_eq!(RegexRefusal::TooLong.to_string(), "longer than 4096 bytes");
        assert_eq!(RegexRefusal::TooLarge.to_string(), "expression too large");
    }
}
