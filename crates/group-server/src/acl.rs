//! ACLs from a file: [`AclAuthorizer`], the [`Authorizer`] a server started with
//! `--acl-file` checks every request against, with the rules of Kafka's
//! `StandardAuthorizer`. The file format and how a request is decided are
//! documented once, on [`AclAuthorizer`] (what `cargo doc` shows of this module).

use std::collections::HashMap;
use std::fmt;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};

use group_coordinator::{AclOperation, Authorizer, Principal, RequestContext, Resource};

use crate::SecurityConfig;

/// Why an ACL file could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AclError {
    /// The file could not be read.
    #[error("cannot read the ACL file {}: {reason}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        reason: group_offsets::IoCause,
    },
    /// A line does not parse.
    #[error("{} line {line}: {message}", path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
        /// What was expected there and what was found.
        #[source]
        message: RuleError,
    },
    /// A reload was asked of a server started without `--acl-file`.
    #[error("no ACL file is configured (--acl-file)")]
    NotConfigured,
}

/// What is wrong with one line of an ACL file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RuleError {
    /// The line ends where a word was expected.
    #[error("expected {expected}, found the end of the line")]
    Missing {
        /// What was expected.
        expected: &'static str,
    },
    /// A word is not what its place asks for.
    #[error("expected {expected}, found `{found}`")]
    Unexpected {
        /// What was expected.
        expected: &'static str,
        /// The word found.
        found: String,
    },
    /// `prefixed` on a resource that names no prefix (`Cluster`, or `*`).
    #[error("`{word}` needs a group or topic name prefix, not `{resource}`")]
    NoPrefix {
        /// The `prefixed` word as written.
        word: String,
        /// `Cluster` or `*`.
        resource: &'static str,
    },
    /// A cluster other than Kafka's one.
    #[error("expected Cluster:kafka-cluster (the only cluster), found Cluster:{0}")]
    OtherCluster(String),
    /// A group or topic resource without a name.
    #[error("expected a name after `{0}` (or `*` for every one)")]
    NoName(String),
}

/// The [`Authorizer`] of a server started with `--acl-file`: the rules of an ACL file
/// plus the super users.
///
/// Cheap on the request path: a decision looks up the rules for the resource's exact
/// name and `*`, and scans the prefixed ones; a [`reload`](AclAuthorizer::reload)
/// swaps in a whole new rule set.
///
/// # The ACL file
///
/// One rule a line; `#` at the start of a word starts a comment (a `#` inside a
/// name is part of it), blank lines are ignored:
///
/// ```text
/// # permission principal operations  resource           [prefixed] [from host]
/// allow User:alice   READ            Group:orders
/// allow User:alice   READ,DESCRIBE   Topic:orders-events
/// allow User:bob     ALL             Group:batch-       prefixed
/// allow User:*       DESCRIBE        Topic:*
/// deny  User:mallory ALL             Group:*            from 10.0.0.7
/// allow User:ops     DESCRIBE        Cluster:kafka-cluster
/// ```
///
/// - **permission**: `allow` or `deny`.
/// - **principal**: `Type:name` as the connection authenticated (`User:alice`; a
///   plaintext connection without SASL is `User:ANONYMOUS`); `User:*` is every
///   principal.
/// - **operations**: one or more of `READ`, `WRITE`, `CREATE`, `DESCRIBE`, `DELETE`,
///   `ALTER`, `CLUSTER_ACTION`, `DESCRIBE_CONFIGS`, `ALTER_CONFIGS`, `IDEMPOTENT_WRITE`
///   and `ALL`, separated by commas.
/// - **resource**: `Group:<id>`, `Topic:<name>`, `TransactionalId:<id>` (WRITE on it
///   lets a producer send TxnOffsetCommit) or `Cluster:kafka-cluster` (`Cluster`
///   alone and `Cluster:*` are the same: there is one cluster). The name is taken verbatim up to the next blank (it may hold
///   `:` and `*`); the name `*` alone is every resource of the type.
/// - **`prefixed`**: Kafka's pattern type `PREFIXED`: the name is a prefix
///   (`Group:batch- prefixed` is every group whose id starts with `batch-`). Without
///   it the pattern is `LITERAL`: the name itself, or `*`.
/// - **`from <host>`**: only connections from this IP address; `from *` (the
///   default) is every host.
///
/// Keywords, operations and resource types are case-insensitive; principals and
/// resource names are not, as in Kafka. A name holding a blank cannot be written.
/// A line that does not parse fails the whole file, naming the file, the line and
/// what was expected there.
///
/// # How a request is decided
///
/// As Kafka's `StandardAuthorizerData.authorize`, with its defaults:
///
/// 1. A super user (`--super-users User:admin;User:ops`, Kafka's `super.users`) is
///    allowed everything.
/// 2. A `deny` rule matching the principal, the host, the resource and the operation
///    (or `ALL`) denies, whatever allows it.
/// 3. An `allow` rule matching them allows. Allowing `READ`, `WRITE`, `DELETE` or
///    `ALTER` also allows `DESCRIBE`, and `ALTER_CONFIGS` allows `DESCRIBE_CONFIGS`
///    (a `deny` never implies anything).
/// 4. Nothing matching denies (Kafka's `allow.everyone.if.no.acl.found=false`).
///
/// # Reloading
///
/// [`reload`](AclAuthorizer::reload) rereads the file; [`GroupServer`](crate::GroupServer)
/// calls it on SIGHUP and from [`GroupServer::reload_acls`](crate::GroupServer::reload_acls).
/// A file that no longer parses keeps the rules in force and logs an error; requests
/// never see a half-read file. Super users come from the configuration and are not
/// reread. Without `--acl-file` a SIGHUP is still handled: it logs a line and changes
/// nothing.
///
/// # Example
///
/// ```
/// use group_coordinator::{AclOperation, Authorizer, Principal, RequestContext, Resource};
/// use group_server::AclAuthorizer;
///
/// let file = std::env::temp_dir().join(format!("acl-doc-{}", std::process::id()));
/// std::fs::write(&file, "allow User:alice READ Group:orders- prefixed\n")?;
/// let acls = AclAuthorizer::load(&file, &[])?;
/// let alice = RequestContext::new(Principal::user("alice"));
/// assert!(acls.authorize(&alice, AclOperation::Read, Resource::Group("orders-eu")));
/// assert!(acls.authorize(&alice, AclOperation::Describe, Resource::Group("orders-eu")));
/// assert!(!acls.authorize(&alice, AclOperation::Delete, Resource::Group("orders-eu")));
/// assert!(!acls.authorize(&alice, AclOperation::Read, Resource::Group("billing")));
/// # std::fs::remove_file(&file)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct AclAuthorizer {
    path: PathBuf,
    super_users: Vec<(String, String)>,
    rules: RwLock<Arc<Rules>>,
}

impl fmt::Debug for AclAuthorizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AclAuthorizer")
            .field("path", &self.path)
            .field("super_users", &self.super_users.len())
            .field("rules", &self.rule_count())
            .finish()
    }
}

impl AclAuthorizer {
    /// Reads the ACL file `path`; `super_users` are principals such as `User:admin`
    /// (Kafka's `super.users`), allowed everything. An entry without a `:` names no
    /// principal and is ignored (the configuration refuses one before this).
    pub fn load(path: impl Into<PathBuf>, super_users: &[String]) -> Result<AclAuthorizer, AclError> {
        let path = path.into();
        let rules = Rules::read(&path)?;
        let super_users = super_users
            .iter()
            .filter_map(|p| p.split_once(':'))
            .map(|(kind, name)| (kind.to_owned(), name.to_owned()))
            .collect();
        Ok(AclAuthorizer { path, super_users, rules: RwLock::new(Arc::new(rules)) })
    }

    /// The authorizer `security` asks for: `None` without an ACL file.
    pub fn from_config(security: &SecurityConfig) -> Result<Option<Arc<AclAuthorizer>>, AclError> {
        let Some(path) = &security.acl_file else { return Ok(None) };
        let acls = AclAuthorizer::load(path, &security.super_users)?;
        tracing::info!(target: "group_server", "ACLs: {} rule(s) from {}", acls.rule_count(), path.display());
        Ok(Some(Arc::new(acls)))
    }

    /// The file the rules come from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many rules are in force (a line naming several operations is one rule).
    pub fn rule_count(&self) -> usize {
        self.current().count
    }

    /// Rereads the file and puts its rules in force, returning how many there are.
    /// A file that cannot be read or parsed changes nothing: the error is logged
    /// and returned, and the rules in force stay.
    pub fn reload(&self) -> Result<usize, AclError> {
        match Rules::read(&self.path) {
            Ok(rules) => {
                let count = rules.count;
                *self.rules.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(rules);
                tracing::info!(
                    target: "group_server",
                    rules = count,
                    "ACLs reloaded: {count} rule(s) from {}",
                    self.path.display()
                );
                Ok(count)
            }
            Err(e) => {
                tracing::error!(target: "group_server", "ACLs not reloaded, the previous rules stay: {e}");
                Err(e)
            }
        }
    }

    fn current(&self) -> Arc<Rules> {
        Arc::clone(&self.rules.read().unwrap_or_else(PoisonError::into_inner))
    }

    pub(crate) fn is_super_user(&self, principal: &Principal) -> bool {
        self.super_users
            .iter()
            .any(|(kind, name)| kind == principal.principal_type() && name == principal.name())
    }
}

impl Authorizer for AclAuthorizer {
    fn authorize(&self, context: &RequestContext, operation: AclOperation, resource: Resource<'_>) -> bool {
        if self.is_super_user(&context.principal) {
            return true;
        }
        // Kafka reports the client as `/1.2.3.4` (`InetAddress.toString`); rules name
        // the bare address.
        let host = context.client_host.trim_start_matches('/').parse::<IpAddr>().ok();
        let allowed = self.current().allows(&context.principal, host, operation, resource);
        if !allowed {
            // Kafka's authorizer logs each denial (at INFO on its own logger); here it
            // is a debug line, the coordinator counts them.
            tracing::debug!(
                target: "group_server::acl",
                "denied {} {operation:?} on {resource:?} from {}",
                context.principal,
                context.client_host
            );
        }
        allowed
    }
}

/// The kinds of resource a rule names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Group,
    Topic,
    Cluster,
    TransactionalId,
}

impl Kind {
    fn index(self) -> usize {
        self as usize
    }
}

/// The name of Kafka's single cluster resource (`Resource.CLUSTER_NAME`).
const CLUSTER_NAME: &str = "kafka-cluster";

/// A set of operations, as bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Operations(u16);

impl Operations {
    const READ: u16 = 1;
    const WRITE: u16 = 1 << 1;
    const DESCRIBE: u16 = 1 << 2;
    const DELETE: u16 = 1 << 3;
    const ALTER: u16 = 1 << 4;
    const CLUSTER_ACTION: u16 = 1 << 5;
    const ALL: u16 = 1 << 6;
    const DESCRIBE_CONFIGS: u16 = 1 << 7;
    const ALTER_CONFIGS: u16 = 1 << 8;
    const CREATE: u16 = 1 << 9;
    const IDEMPOTENT_WRITE: u16 = 1 << 10;

    /// The file's names, with their bits.
    const NAMES: [(&'static str, u16); 11] = [
        ("READ", Operations::READ),
        ("WRITE", Operations::WRITE),
        ("DESCRIBE", Operations::DESCRIBE),
        ("DELETE", Operations::DELETE),
        ("ALTER", Operations::ALTER),
        ("CLUSTER_ACTION", Operations::CLUSTER_ACTION),
        ("DESCRIBE_CONFIGS", Operations::DESCRIBE_CONFIGS),
        ("ALTER_CONFIGS", Operations::ALTER_CONFIGS),
        ("CREATE", Operations::CREATE),
        ("IDEMPOTENT_WRITE", Operations::IDEMPOTENT_WRITE),
        ("ALL", Operations::ALL),
    ];

    fn bit(operation: AclOperation) -> u16 {
        match operation {
            AclOperation::Read => Operations::READ,
            AclOperation::Describe => Operations::DESCRIBE,
            AclOperation::Delete => Operations::DELETE,
            AclOperation::Write => Operations::WRITE,
            AclOperation::ClusterAction => Operations::CLUSTER_ACTION,
            AclOperation::DescribeConfigs => Operations::DESCRIBE_CONFIGS,
            AclOperation::AlterConfigs => Operations::ALTER_CONFIGS,
            AclOperation::Create => Operations::CREATE,
            AclOperation::Alter => Operations::ALTER,
            AclOperation::IdempotentWrite => Operations::IDEMPOTENT_WRITE,
            // An operation this authorizer does not know matches only `ALL`.
            _ => 0,
        }
    }

    /// Whether a `deny` of these denies `operation`: only itself or `ALL`.
    fn denies(self, operation: AclOperation) -> bool {
        self.0 & (Operations::bit(operation) | Operations::ALL) != 0
    }

    /// Whether an `allow` of these allows `operation`: itself, `ALL`, DESCRIBE
    /// implied by READ, WRITE, DELETE or ALTER (Kafka's
    /// `StandardAuthorizerData.IMPLIES_DESCRIBE`), or DESCRIBE_CONFIGS implied by
    /// ALTER_CONFIGS (`IMPLIES_DESCRIBE_CONFIGS`).
    fn allows(self, operation: AclOperation) -> bool {
        let mut implied = Operations::bit(operation) | Operations::ALL;
        if operation == AclOperation::Describe {
            implied |= Operations::READ | Operations::WRITE | Operations::DELETE | Operations::ALTER;
        }
        if operation == AclOperation::DescribeConfigs {
            implied |= Operations::ALTER_CONFIGS;
        }
        self.0 & implied != 0
    }
}

/// Who a rule is for.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Who {
    /// `User:*`: every principal (Kafka's `WILDCARD_PRINCIPAL`).
    Anyone,
    /// One principal: its type and name.
    One(String, String),
}

/// One rule, without its resource (the index holds that).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    allow: bool,
    who: Who,
    /// `None` is every host.
    host: Option<IpAddr>,
    operations: Operations,
}

impl Entry {
    fn applies_to(&self, principal: &Principal, host: Option<IpAddr>) -> bool {
        let who = match &self.who {
            Who::Anyone => true,
            Who::One(kind, name) => kind == principal.principal_type() && name == principal.name(),
        };
        who && self.host.is_none_or(|h| host == Some(h))
    }
}

/// A rule as a line gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Rule {
    entry: Entry,
    kind: Kind,
    name: String,
    prefixed: bool,
}

/// The rules of one file, indexed by resource kind: literal names (`*` included)
/// by name, prefixes in a list.
#[derive(Debug, Default)]
struct Rules {
    literal: [HashMap<String, Vec<Entry>>; 4],
    prefixed: [Vec<(String, Entry)>; 4],
    count: usize,
}

impl Rules {
    fn read(path: &Path) -> Result<Rules, AclError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| AclError::Read { path: path.to_owned(), reason: e.into() })?;
        Rules::parse(&text).map_err(|(line, message)| AclError::Syntax {
            path: path.to_owned(),
            line,
            message,
        })
    }

    /// The rules of `text`, or the first bad line (from 1) and what is wrong with it.
    fn parse(text: &str) -> Result<Rules, (usize, RuleError)> {
        let mut rules = Rules::default();
        for (n, line) in text.lines().enumerate() {
            let line = strip_comment(line);
            if line.trim().is_empty() {
                continue;
            }
            let rule = parse_rule(line).map_err(|message| (n + 1, message))?;
            rules.add(rule);
        }
        Ok(rules)
    }

    fn add(&mut self, rule: Rule) {
        let i = rule.kind.index();
        if rule.prefixed {
            self.prefixed[i].push((rule.name, rule.entry));
        } else {
            self.literal[i].entry(rule.name).or_default().push(rule.entry);
        }
        self.count += 1;
    }

    /// The rules that name `resource`: by its name, by `*`, by a prefix of it.
    fn matching<'a>(&'a self, resource: Resource<'a>) -> impl Iterator<Item = &'a Entry> + 'a {
        let (kind, name) = match resource {
            Resource::Group(name) => (Some(Kind::Group), name),
            Resource::Topic(name) => (Some(Kind::Topic), name),
            Resource::Cluster => (Some(Kind::Cluster), CLUSTER_NAME),
            Resource::TransactionalId(name) => (Some(Kind::TransactionalId), name),
            // A resource this authorizer does not know has no rules.
            _ => (None, ""),
        };
        kind.into_iter().flat_map(move |kind| {
            let i = kind.index();
            let literal = self.literal[i].get(name).into_iter().flatten();
            let wildcard = if name == "*" { None } else { self.literal[i].get("*") };
            let prefixed =
                self.prefixed[i].iter().filter(move |(prefix, _)| name.starts_with(prefix.as_str()));
            literal.chain(wildcard.into_iter().flatten()).chain(prefixed.map(|(_, entry)| entry))
        })
    }

    /// Steps 2 to 4 of the module docs: a matching deny wins, else a matching allow
    /// allows, else denied.
    fn allows(
        &self,
        principal: &Principal,
        host: Option<IpAddr>,
        operation: AclOperation,
        resource: Resource<'_>,
    ) -> bool {
        let mut allowed = false;
        for entry in self.matching(resource).filter(|e| e.applies_to(principal, host)) {
            if !entry.allow && entry.operations.denies(operation) {
                return false;
            }
            allowed |= entry.allow && entry.operations.allows(operation);
        }
        allowed
    }
}

/// `line` up to its comment: a `#` that starts the line or follows a blank (a `#`
/// inside a word is part of a name, as group ids may hold one).
fn strip_comment(line: &str) -> &str {
    let mut previous = ' ';
    for (i, c) in line.char_indices() {
        if c == '#' && previous.is_whitespace() {
            return &line[..i];
        }
        previous = c;
    }
    line
}

/// `allow User:alice READ,DESCRIBE Group:orders- prefixed from 10.0.0.1`, comment gone.
fn parse_rule(line: &str) -> Result<Rule, RuleError> {
    let mut words = line.split_whitespace();
    let mut next = |expected: &'static str| words.next().ok_or(RuleError::Missing { expected });
    let allow = match next("`allow` or `deny`")? {
        w if w.eq_ignore_ascii_case("allow") => true,
        w if w.eq_ignore_ascii_case("deny") => false,
        w => return Err(unexpected("`allow` or `deny`", w)),
    };
    let who = parse_principal(next("a principal such as User:alice")?)?;
    let operations = parse_operations(next("operations such as READ or READ,DESCRIBE")?)?;
    let (kind, name) = parse_resource(next("a resource such as Group:orders")?)?;
    let mut rule = Rule { entry: Entry { allow, who, host: None, operations }, kind, name, prefixed: false };
    let mut word = words.next();
    if let Some(w) = word.filter(|w| w.eq_ignore_ascii_case("prefixed")) {
        if rule.kind == Kind::Cluster || rule.name == "*" {
            let resource = if rule.kind == Kind::Cluster { "Cluster" } else { "*" };
            return Err(RuleError::NoPrefix { word: w.to_owned(), resource });
        }
        rule.prefixed = true;
        word = words.next();
    }
    if word.is_some_and(|w| w.eq_ignore_ascii_case("from")) {
        let host =
            words.next().ok_or(RuleError::Missing { expected: "a host address or `*` after `from`" })?;
        rule.entry.host = match host {
            "*" => None,
            h => Some(h.parse().map_err(|_| unexpected("an IP address or `*` after `from`", h))?),
        };
        word = words.next();
    }
    match word {
        None => Ok(rule),
        Some(w) => Err(unexpected("`prefixed`, `from <host>` or the end of the line after the resource", w)),
    }
}

fn unexpected(expected: &'static str, found: &str) -> RuleError {
    RuleError::Unexpected { expected, found: found.to_owned() }
}

fn parse_principal(word: &str) -> Result<Who, RuleError> {
    match word.split_once(':') {
        Some(("User", "*")) => Ok(Who::Anyone),
        Some((kind, name)) if !kind.is_empty() && !name.is_empty() => {
            Ok(Who::One(kind.to_owned(), name.to_owned()))
        }
        _ => Err(unexpected("a principal such as User:alice or User:*", word)),
    }
}

fn parse_operations(word: &str) -> Result<Operations, RuleError> {
    let mut bits = 0;
    for name in word.split(',') {
        let Some(&(_, bit)) = Operations::NAMES.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) else {
            return Err(unexpected(
                "operations among READ, WRITE, CREATE, DESCRIBE, DELETE, ALTER, CLUSTER_ACTION, \
                 DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE and ALL (separated by commas)",
                name,
            ));
        };
        bits |= bit;
    }
    Ok(Operations(bits))
}

fn parse_resource(word: &str) -> Result<(Kind, String), RuleError> {
    let (kind, name) = word.split_once(':').unwrap_or((word, ""));
    let kind = match kind {
        k if k.eq_ignore_ascii_case("group") => Kind::Group,
        k if k.eq_ignore_ascii_case("topic") => Kind::Topic,
        k if k.eq_ignore_ascii_case("cluster") => Kind::Cluster,
        k if k.eq_ignore_ascii_case("transactionalid") => Kind::TransactionalId,
        _ => {
            return Err(unexpected(
                "a resource Group:<id>, Topic:<name>, TransactionalId:<id> or Cluster:kafka-cluster",
                word,
            ));
        }
    };
    match (kind, name) {
        (Kind::Cluster, "" | CLUSTER_NAME | "*") => Ok((kind, CLUSTER_NAME.to_owned())),
        (Kind::Cluster, other) => Err(RuleError::OtherCluster(other.to_owned())),
        (_, "") => Err(RuleError::NoName(word.to_owned())),
        (_, name) => Ok((kind, name.to_owned())),
    }
}

#[cfg(test)]
#[path = "acl_tests.rs"]
mod tests;
