//! Kafka's regular-expression syntax for `SubscribedTopicRegex`: RE2/J 1.8's
//! parser in Perl mode (`com.google.re2j.Pattern.compile`, what Kafka calls), so
//! that a pattern is refused exactly when RE2/J refuses it, with RE2/J's
//! description (`PatternSyntaxException.getDescription`), and an accepted one is
//! rewritten in the `regex` crate's syntax with the same meaning.
//!
//! The pattern is walked as `Parser.parseInternal` walks it, token by token with
//! RE2/J's checks in RE2/J's order, and each token is written out in a form the
//! `regex` crate reads the same way: literals as `\x{..}`, Perl classes (`\d`,
//! `\s`, `\w`) and `\b` as RE2's ASCII sets, POSIX classes as ranges, `\Q...\E`
//! as literals, octal escapes as code points, a `{` that is no repetition as a
//! literal, named groups without their names (only whole matches matter), and
//! inline flags as the full state of `imsU`, written before the next token that
//! needs them (so that `a(?i)*` stays `a*`, as in RE2/J). Where the `regex`
//! crate cannot express what RE2/J accepts, the nearest equivalent for topic
//! names is written: a surrogate code point (no topic name holds one) matches
//! nothing.

use std::collections::HashSet;
use std::fmt::Write as _;

/// Why RE2/J refuses a pattern: its `Parser.ERR_*` descriptions, which Kafka
/// puts in the INVALID_REGULAR_EXPRESSION message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum Re2jError {
    /// A `)` with no `(` open (RE2/J's stack underflows).
    #[error("regexp/syntax: internal error")]
    Internal,
    /// A range whose end comes before its start, an unknown POSIX or Unicode class.
    #[error("invalid character class range")]
    InvalidCharRange,
    /// An escape RE2/J does not know (`\C`, `\e`, a backreference, a bad `\x`).
    #[error("invalid escape sequence")]
    InvalidEscape,
    /// A group name that is empty, unclosed or not `[A-Za-z0-9_]+`.
    #[error("invalid named capture")]
    InvalidNamedCapture,
    /// A `(?` that is no flag group RE2/J knows (lookaround, `x` flag, comments).
    #[error("invalid or unsupported Perl syntax")]
    InvalidPerlOp,
    /// A repetition of a repetition (`a**`, a possessive `a*+`).
    #[error("invalid nested repetition operator")]
    InvalidRepeatOp,
    /// A count above 1000, or `{max,min}`.
    #[error("invalid repeat count")]
    InvalidRepeatSize,
    /// An unclosed `[`.
    #[error("missing closing ]")]
    MissingBracket,
    /// An unclosed `(`.
    #[error("missing closing )")]
    MissingParen,
    /// A repetition with nothing before it.
    #[error("missing argument to repetition operator")]
    MissingRepeatArgument,
    /// A `\` ending the pattern.
    #[error("trailing backslash at end of expression")]
    TrailingBackslash,
    /// Two groups with one name.
    #[error("duplicate capture group name")]
    DuplicateNamedCapture,
}

/// Highest code point (`Unicode.MAX_RUNE`).
const MAX_RUNE: u32 = 0x10_FFFF;
/// RE2/J's repetition count limit.
const MAX_REPEAT: u32 = 1_000;

/// RE2/J 1.8's general categories (`UnicodeTables.CATEGORIES`), besides `Any`.
const CATEGORIES: &[&str] = &[
    "C", "Cc", "Cf", "Co", "Cs", "L", "Ll", "Lm", "Lo", "Lt", "Lu", "M", "Mc", "Me", "Mn", "N", "Nd", "Nl",
    "No", "P", "Pc", "Pd", "Pe", "Pf", "Pi", "Po", "Ps", "S", "Sc", "Sk", "Sm", "So", "Z", "Zl", "Zp", "Zs",
];

/// RE2/J 1.8's scripts (`UnicodeTables.SCRIPTS`, Unicode 6.0).
const SCRIPTS: &[&str] = &[
    "Arabic",
    "Armenian",
    "Avestan",
    "Balinese",
    "Bamum",
    "Batak",
    "Bengali",
    "Bopomofo",
    "Brahmi",
    "Braille",
    "Buginese",
    "Buhid",
    "Canadian_Aboriginal",
    "Carian",
    "Cham",
    "Cherokee",
    "Common",
    "Coptic",
    "Cuneiform",
    "Cypriot",
    "Cyrillic",
    "Deseret",
    "Devanagari",
    "Egyptian_Hieroglyphs",
    "Ethiopic",
    "Georgian",
    "Glagolitic",
    "Gothic",
    "Greek",
    "Gujarati",
    "Gurmukhi",
    "Han",
    "Hangul",
    "Hanunoo",
    "Hebrew",
    "Hiragana",
    "Imperial_Aramaic",
    "Inherited",
    "Inscriptional_Pahlavi",
    "Inscriptional_Parthian",
    "Javanese",
    "Kaithi",
    "Kannada",
    "Katakana",
    "Kayah_Li",
    "Kharoshthi",
    "Khmer",
    "Lao",
    "Latin",
    "Lepcha",
    "Limbu",
    "Linear_B",
    "Lisu",
    "Lycian",
    "Lydian",
    "Malayalam",
    "Mandaic",
    "Meetei_Mayek",
    "Mongolian",
    "Myanmar",
    "New_Tai_Lue",
    "Nko",
    "Ogham",
    "Ol_Chiki",
    "Old_Italic",
    "Old_Persian",
    "Old_South_Arabian",
    "Old_Turkic",
    "Oriya",
    "Osmanya",
    "Phags_Pa",
    "Phoenician",
    "Rejang",
    "Runic",
    "Samaritan",
    "Saurashtra",
    "Shavian",
    "Sinhala",
    "Sundanese",
    "Syloti_Nagri",
    "Syriac",
    "Tagalog",
    "Tagbanwa",
    "Tai_Le",
    "Tai_Tham",
    "Tai_Viet",
    "Tamil",
    "Telugu",
    "Thaana",
    "Thai",
    "Tibetan",
    "Tifinagh",
    "Ugaritic",
    "Unknown",
    "Vai",
    "Yi",
];

/// RE2's POSIX classes (`CharGroup.POSIX_GROUPS`), as `regex` class contents.
const POSIX: &[(&str, &str)] = &[
    ("alnum", r"0-9A-Za-z"),
    ("alpha", r"A-Za-z"),
    ("ascii", r"\x00-\x7F"),
    ("blank", r"\t "),
    ("cntrl", r"\x00-\x1F\x7F"),
    ("digit", r"0-9"),
    ("graph", r"!-~"),
    ("lower", r"a-z"),
    ("print", r" -~"),
    ("punct", r"!-/:-@\[-`\{-~"),
    ("space", r"\t\n\x0B\f\r "),
    ("upper", r"A-Z"),
    ("word", r"0-9A-Za-z_"),
    ("xdigit", r"0-9A-Fa-f"),
];

/// RE2's Perl classes (`CharGroup.PERL_GROUPS`): ASCII only, unlike the `regex`
/// crate's Unicode `\d`, `\s`, `\w`.
fn perl_class(c: char) -> Option<(bool, &'static str)> {
    Some(match c {
        'd' => (true, "0-9"),
        'D' => (false, "0-9"),
        's' => (true, r"\t\n\f\r "),
        'S' => (false, r"\t\n\f\r "),
        'w' => (true, "0-9A-Za-z_"),
        'W' => (false, "0-9A-Za-z_"),
        _ => return None,
    })
}

/// The inline flags RE2/J tracks: `i` (`FOLD_CASE`), `m` (not `ONE_LINE`), `s`
/// (`DOT_NL`) and `U` (`NON_GREEDY`); the `regex` crate's flags of those names
/// mean the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Flags {
    fold_case: bool,
    multi_line: bool,
    dot_nl: bool,
    ungreedy: bool,
}

impl Flags {
    /// The flag group that sets exactly this state in the `regex` crate.
    fn group(self, open: &str) -> String {
        let all = [('i', self.fold_case), ('m', self.multi_line), ('s', self.dot_nl), ('U', self.ungreedy)];
        let on: String = all.iter().filter(|f| f.1).map(|f| f.0).collect();
        let off: String = all.iter().filter(|f| !f.1).map(|f| f.0).collect();
        if off.is_empty() { format!("(?{on}{open}") } else { format!("(?{on}-{off}{open}") }
    }
}

/// One open group: RE2/J's flags when it opened (restored at its `)`), the
/// flags written out then, and where its output starts.
#[derive(Debug)]
struct Open {
    flags: Flags,
    written: Option<Flags>,
    start: usize,
}

/// The walk over one pattern.
#[derive(Debug)]
struct Walk {
    chars: Vec<char>,
    pos: usize,
    out: String,
    flags: Flags,
    /// The flags the output is in, `None` when unknown (after a `|` once flags
    /// were written in the group): the next token writes them first.
    written: Option<Flags>,
    groups: Vec<Open>,
    /// Where the output of the top of RE2/J's stack starts, `None` when the
    /// top is no expression (nothing yet, a `(` or a `|`).
    operand: Option<usize>,
    /// The operand is a repetition already (written out, it needs a group
    /// before another applies).
    operand_repeated: bool,
    /// RE2/J's `lastRepeatPos != -1`: the previous token was a repetition, or
    /// a `{` (even one taken as a literal).
    after_repeat: bool,
    names: HashSet<String>,
}

/// The `regex` crate pattern with RE2/J's meaning for `source`, or why RE2/J
/// refuses it.
pub(crate) fn translate(source: &str) -> Result<String, Re2jError> {
    let mut walk = Walk {
        chars: source.chars().collect(),
        pos: 0,
        out: String::with_capacity(source.len() * 2),
        flags: Flags::default(),
        written: Some(Flags::default()),
        groups: Vec::new(),
        operand: None,
        operand_repeated: false,
        after_repeat: false,
        names: HashSet::new(),
    };
    walk.run()?;
    Ok(walk.out)
}

impl Walk {
    fn more(&self) -> bool {
        self.pos < self.chars.len()
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    fn looking_at(&self, s: &str) -> bool {
        let mut rest = self.chars[self.pos..].iter();
        s.chars().all(|c| rest.next() == Some(&c))
    }

    /// The index of `s` in the rest of the pattern, from the current position.
    fn find(&self, from: usize, s: &str) -> Option<usize> {
        let needle: Vec<char> = s.chars().collect();
        (from..=self.chars.len().saturating_sub(needle.len()))
            .find(|&i| self.chars[i..].starts_with(&needle))
            .map(|i| i - from)
    }

    /// `parseInternal`.
    fn run(&mut self) -> Result<(), Re2jError> {
        while let Some(c) = self.peek() {
            let mut repeat = false;
            match c {
                '(' => {
                    if self.looking_at("(?") {
                        self.perl_flags()?;
                    } else {
                        self.pos += 1;
                        self.open("(", self.flags);
                    }
                }
                '|' => {
                    self.pos += 1;
                    self.out.push('|');
                    if self.written != self.groups.last().map_or(Some(Flags::default()), |g| g.written) {
                        self.written = None;
                    }
                    self.operand = None;
                }
                ')' => {
                    self.pos += 1;
                    let Some(open) = self.groups.pop() else { return Err(Re2jError::Internal) };
                    self.out.push(')');
                    self.flags = open.flags;
                    self.written = open.written;
                    self.operand = Some(open.start);
                    self.operand_repeated = false;
                }
                '^' | '$' | '.' => {
                    self.pos += 1;
                    // Assertions are grouped, so that a repetition of one (which
                    // RE2/J allows) reads as one in the `regex` crate too.
                    let atom = match c {
                        '^' => "(?:^)",
                        '$' => "(?:$)",
                        _ => ".",
                    };
                    self.atom(atom);
                }
                '[' => self.class()?,
                '*' | '+' | '?' => {
                    self.pos += 1;
                    repeat = true;
                    self.repeat(&c.to_string())?;
                }
                '{' => {
                    repeat = true;
                    match self.repeat_counts()? {
                        Some(counts) => self.repeat(&counts)?,
                        // Not a repetition: a literal `{` (which still counts as
                        // one for RE2/J's nested-repetition check).
                        None => {
                            self.pos += 1;
                            self.literal('{');
                        }
                    }
                }
                '\\' => self.escape()?,
                other => {
                    self.pos += 1;
                    self.literal(other);
                }
            }
            self.after_repeat = repeat;
        }
        if self.groups.is_empty() { Ok(()) } else { Err(Re2jError::MissingParen) }
    }

    /// Writes the flags in force if the output is not in them yet.
    fn sync_flags(&mut self) {
        if self.written != Some(self.flags) {
            self.out.push_str(&self.flags.group(")"));
            self.written = Some(self.flags);
        }
    }

    /// Writes one expression: it becomes the operand of a repetition.
    fn atom(&mut self, text: &str) {
        self.sync_flags();
        self.operand = Some(self.out.len());
        self.operand_repeated = false;
        self.out.push_str(text);
    }

    fn literal(&mut self, c: char) {
        self.atom(&literal(u32::from(c)));
    }

    /// Opens a group with `open` (`(` or a flag group's `(?...:`); RE2/J
    /// restores `restore` at its `)`.
    fn open(&mut self, open: &str, restore: Flags) {
        self.sync_flags();
        self.groups.push(Open { flags: restore, written: self.written, start: self.out.len() });
        self.out.push_str(open);
        self.operand = None;
    }

    /// `repeat`: `op` applies to the operand; RE2/J's checks, in its order.
    fn repeat(&mut self, op: &str) -> Result<(), Re2jError> {
        let lazy = self.peek() == Some('?');
        if lazy {
            self.pos += 1;
        }
        if self.after_repeat {
            return Err(Re2jError::InvalidRepeatOp);
        }
        let Some(start) = self.operand else { return Err(Re2jError::MissingRepeatArgument) };
        if self.operand_repeated {
            self.out.insert_str(start, "(?:");
            self.out.push(')');
        }
        self.out.push_str(op);
        if lazy {
            self.out.push('?');
        }
        self.operand_repeated = true;
        Ok(())
    }

    /// `parseRepeat` at a `{`: the counts as the `regex` crate writes them, or
    /// `None` (and the position unchanged) when it is no repetition.
    fn repeat_counts(&mut self) -> Result<Option<String>, Re2jError> {
        let start = self.pos;
        let parsed = self.counts();
        match parsed {
            Ok(Some((min, max))) => {
                let text = match max {
                    Some(max) if max == min => format!("{{{min}}}"),
                    Some(max) => format!("{{{min},{max}}}"),
                    None => format!("{{{min},}}"),
                };
                Ok(Some(text))
            }
            Ok(None) => {
                self.pos = start;
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    fn counts(&mut self) -> Result<Option<(u32, Option<u32>)>, Re2jError> {
        self.pos += 1; // '{'
        let Some(min) = self.int() else { return Ok(None) };
        if !self.more() {
            return Ok(None);
        }
        let max = if self.peek() == Some(',') {
            self.pos += 1;
            if !self.more() {
                return Ok(None);
            }
            if self.peek() == Some('}') {
                None
            } else {
                match self.int() {
                    Some(max) => Some(max),
                    None => return Ok(None),
                }
            }
        } else {
            Some(min)
        };
        if self.peek() != Some('}') {
            return Ok(None);
        }
        self.pos += 1;
        // An overflowing number (over 8 digits) is `u32::MAX` here.
        if min > MAX_REPEAT || max.is_some_and(|m| m > MAX_REPEAT || min > m) {
            return Err(Re2jError::InvalidRepeatSize);
        }
        Ok(Some((min, max)))
    }

    /// `parseInt`: a decimal without leading zeros; `None` when malformed,
    /// `u32::MAX` when longer than 8 digits.
    fn int(&mut self) -> Option<u32> {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        let digits: String = self.chars[start..self.pos].iter().collect();
        if digits.is_empty() || (digits.len() > 1 && digits.starts_with('0')) {
            return None;
        }
        if digits.len() > 8 {
            return Some(u32::MAX);
        }
        digits.parse().ok()
    }

    /// `parsePerlFlags`, at `(?`.
    fn perl_flags(&mut self) -> Result<(), Re2jError> {
        let named = if self.looking_at("(?P<") {
            Some(4)
        } else if self.looking_at("(?<") {
            Some(3)
        } else {
            None
        };
        if let Some(begin) = named {
            let Some(len) = self.find(self.pos + begin, ">") else {
                return Err(Re2jError::InvalidNamedCapture);
            };
            let name: String = self.chars[self.pos + begin..self.pos + begin + len].iter().collect();
            self.pos += begin + len + 1;
            if name.is_empty() || !name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric()) {
                return Err(Re2jError::InvalidNamedCapture);
            }
            if !self.names.insert(name) {
                return Err(Re2jError::DuplicateNamedCapture);
            }
            // Names are dropped: only whether a topic name matches counts.
            self.open("(", self.flags);
            return Ok(());
        }
        self.pos += 2; // "(?"
        let before = self.flags;
        let mut flags = self.flags;
        let mut negate = false;
        let mut saw_flag = false;
        while let Some(c) = self.peek() {
            self.pos += 1;
            match c {
                'i' | 'm' | 's' | 'U' => {
                    let on = !negate;
                    match c {
                        'i' => flags.fold_case = on,
                        'm' => flags.multi_line = on,
                        's' => flags.dot_nl = on,
                        _ => flags.ungreedy = on,
                    }
                    saw_flag = true;
                }
                '-' if !negate => {
                    negate = true;
                    saw_flag = false;
                }
                ':' | ')' => {
                    if negate && !saw_flag {
                        break;
                    }
                    if c == ':' {
                        // The group opens with its flags written in it.
                        self.sync_flags();
                        self.groups.push(Open {
                            flags: before,
                            written: self.written,
                            start: self.out.len(),
                        });
                        let open = if flags == before { "(?:".to_owned() } else { flags.group(":") };
                        self.out.push_str(&open);
                        self.flags = flags;
                        self.written = Some(flags);
                        self.operand = None;
                    } else {
                        // Flags only: written before the next token that needs them.
                        self.flags = flags;
                    }
                    return Ok(());
                }
                _ => break,
            }
        }
        Err(Re2jError::InvalidPerlOp)
    }

    /// A `\` outside a class: RE2/J's Perl escapes (`\A`, `\b`, `\B`, `\C`,
    /// `\Q`, `\z`), then Unicode classes, Perl classes, and single characters.
    fn escape(&mut self) -> Result<(), Re2jError> {
        if let Some(c) = self.peek_at(1) {
            let fixed = match c {
                'A' => Some(r"(?:\A)"),
                'b' => Some(r"(?-u:\b)"),
                'B' => Some(r"(?-u:\B)"),
                'z' => Some(r"(?:\z)"),
                _ => None,
            };
            if let Some(text) = fixed {
                self.pos += 2;
                self.atom(text);
                return Ok(());
            }
            if c == 'C' {
                return Err(Re2jError::InvalidEscape);
            }
            if c == 'Q' {
                self.pos += 2;
                let end = self.find(self.pos, r"\E");
                let stop = end.map_or(self.chars.len(), |n| self.pos + n);
                while self.pos < stop {
                    let c = self.chars[self.pos];
                    self.pos += 1;
                    self.literal(c);
                }
                if end.is_some() {
                    self.pos += 2;
                }
                return Ok(());
            }
        }
        if let Some(class) = self.unicode_class()? {
            self.atom(&class);
            return Ok(());
        }
        if let Some((positive, set)) = self.peek_at(1).and_then(perl_class) {
            self.pos += 2;
            self.atom(&format!("[{}{set}]", if positive { "" } else { "^" }));
            return Ok(());
        }
        let c = self.escaped_char()?;
        self.atom(&literal(c));
        Ok(())
    }

    /// `parseUnicodeClass` at `\p` or `\P`: the class, or `None` elsewhere.
    fn unicode_class(&mut self) -> Result<Option<String>, Re2jError> {
        if !(self.looking_at(r"\p") || self.looking_at(r"\P")) {
            return Ok(None);
        }
        let mut negated = self.peek_at(1) == Some('P');
        self.pos += 2;
        let Some(c) = self.peek() else { return Err(Re2jError::InvalidCharRange) };
        self.pos += 1;
        let mut name = if c == '{' {
            let Some(len) = self.find(self.pos, "}") else { return Err(Re2jError::InvalidCharRange) };
            let name: String = self.chars[self.pos..self.pos + len].iter().collect();
            self.pos += len + 1;
            name
        } else {
            c.to_string()
        };
        if let Some(rest) = name.strip_prefix('^') {
            negated = !negated;
            name = rest.to_owned();
        }
        let known = name == "Any" || CATEGORIES.contains(&name.as_str()) || SCRIPTS.contains(&name.as_str());
        if !known {
            return Err(Re2jError::InvalidCharRange);
        }
        // Surrogates: none in a `str`, which the `regex` crate will not name.
        if name == "Cs" {
            return Ok(Some(if negated { ANY } else { NOTHING }.to_owned()));
        }
        // RE2/J's own table (the `regex` crate has no such script): surrogates
        // and private use.
        if name == "Unknown" {
            let set = r"\x{E000}-\x{F8FF}\x{F0000}-\x{FFFFD}\x{100000}-\x{10FFFD}";
            return Ok(Some(format!("[{}{set}]", if negated { "^" } else { "" })));
        }
        Ok(Some(format!("\\{}{{{name}}}", if negated { 'P' } else { 'p' })))
    }

    /// `parseEscape`: one escaped character, as a code point (it may be a
    /// surrogate, which RE2/J accepts).
    fn escaped_char(&mut self) -> Result<u32, Re2jError> {
        self.pos += 1; // '\\'
        let Some(c) = self.peek() else { return Err(Re2jError::TrailingBackslash) };
        self.pos += 1;
        let code = match c {
            '1'..='7' if !self.peek().is_some_and(|d| ('0'..='7').contains(&d)) => None,
            '0'..='7' => {
                let mut r = c as u32 - '0' as u32;
                for _ in 1..3 {
                    match self.peek() {
                        Some(d @ '0'..='7') => {
                            r = r * 8 + (d as u32 - '0' as u32);
                            self.pos += 1;
                        }
                        _ => break,
                    }
                }
                Some(r)
            }
            'x' => self.hex(),
            'a' => Some(7),
            'f' => Some(0x0C),
            'n' => Some(0x0A),
            'r' => Some(0x0D),
            't' => Some(0x09),
            'v' => Some(0x0B),
            c if !c.is_ascii_alphanumeric() => Some(c as u32),
            _ => None,
        };
        code.ok_or(Re2jError::InvalidEscape)
    }

    /// After `\x`: two hex digits, or any number (at least one) in braces up
    /// to `MAX_RUNE`.
    fn hex(&mut self) -> Option<u32> {
        let c = self.peek()?;
        self.pos += 1;
        if c == '{' {
            let mut r: u32 = 0;
            let mut digits = 0;
            loop {
                let c = self.peek()?;
                self.pos += 1;
                if c == '}' {
                    break;
                }
                r = r * 16 + c.to_digit(16)?;
                if r > MAX_RUNE {
                    return None;
                }
                digits += 1;
            }
            return (digits > 0).then_some(r);
        }
        let x = c.to_digit(16);
        let y = self.peek()?;
        self.pos += 1;
        Some(x? * 16 + y.to_digit(16)?)
    }

    /// `parseClass`, at `[`.
    fn class(&mut self) -> Result<(), Re2jError> {
        self.pos += 1; // '['
        let mut text = String::from("[");
        if self.peek() == Some('^') {
            self.pos += 1;
            text.push('^');
        }
        let mut first = true;
        while !self.more() || self.peek() != Some(']') || first {
            first = false;
            if self.looking_at("[:")
                && let Some(len) = self.find(self.pos, ":]")
            {
                let name: String = self.chars[self.pos..self.pos + len + 2].iter().collect();
                self.pos += len + 2;
                let inner = &name[2..name.len() - 2];
                let (negated, inner) = match inner.strip_prefix('^') {
                    Some(rest) => (true, rest),
                    None => (false, inner),
                };
                let Some((_, set)) = POSIX.iter().find(|(n, _)| *n == inner) else {
                    return Err(Re2jError::InvalidCharRange);
                };
                let _ = write!(text, "[{}{set}]", if negated { "^" } else { "" });
                continue;
            }
            if let Some(class) = self.unicode_class()? {
                text.push_str(&class);
                continue;
            }
            if self.peek() == Some('\\')
                && let Some((positive, set)) = self.peek_at(1).and_then(perl_class)
            {
                self.pos += 2;
                let _ = write!(text, "[{}{set}]", if positive { "" } else { "^" });
                continue;
            }
            let lo = self.class_char()?;
            let mut hi = lo;
            if self.peek() == Some('-') && self.peek_at(1).is_some() && self.peek_at(1) != Some(']') {
                self.pos += 1;
                hi = self.class_char()?;
                if hi < lo {
                    return Err(Re2jError::InvalidCharRange);
                }
            } else if self.peek() == Some('-') && self.peek_at(1).is_none() {
                // `[a-` then the end: the `-` is read as a class character next,
                // and the class is unclosed.
                self.pos += 1;
                return Err(Re2jError::MissingBracket);
            }
            text.push_str(&range(lo, hi));
        }
        self.pos += 1; // ']'
        text.push(']');
        self.atom(&text);
        Ok(())
    }

    /// `parseClassChar`: one character of a class, maybe escaped.
    fn class_char(&mut self) -> Result<u32, Re2jError> {
        match self.peek() {
            None => Err(Re2jError::MissingBracket),
            Some('\\') => self.escaped_char(),
            Some(c) => {
                self.pos += 1;
                Ok(u32::from(c))
            }
        }
    }
}

/// The surrogate code points: RE2/J accepts them (`\x{D800}`); no `char`, and
/// so no topic name, holds one.
const SURROGATES: std::ops::RangeInclusive<u32> = 0xD800..=0xDFFF;

/// A class that matches nothing: what a surrogate matches in a topic name.
const NOTHING: &str = r"[^\x00-\x{10FFFF}]";

/// A class that matches every character.
const ANY: &str = r"[\x00-\x{10FFFF}]";

/// One code point as a literal the `regex` crate reads as itself.
fn literal(c: u32) -> String {
    match char::from_u32(c) {
        Some(c) if c.is_ascii_alphanumeric() => c.to_string(),
        Some(_) => format!("\\x{{{c:X}}}"),
        None => NOTHING.to_owned(),
    }
}

/// A class range `lo-hi` as `regex` class contents, without its surrogates.
fn range(lo: u32, hi: u32) -> String {
    let one = |lo: u32, hi: u32| {
        if lo == hi { literal(lo) } else { format!("{}-{}", literal(lo), literal(hi)) }
    };
    let below = (lo < *SURROGATES.start()).then(|| one(lo, hi.min(SURROGATES.start() - 1)));
    let above = (hi > *SURROGATES.end()).then(|| one(lo.max(SURROGATES.end() + 1), hi));
    match (below, above) {
        (None, None) => NOTHING.to_owned(),
        (below, above) => below.unwrap_or_default() + &above.unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every Unicode class name RE2/J knows is one the `regex` crate knows too.
    #[test]
    fn every_re2j_unicode_class_compiles() {
        for name in CATEGORIES.iter().chain(SCRIPTS).chain(&["Any"]) {
            let pattern = translate(&format!(r"\p{{{name}}}\P{{{name}}}[\p{{^{name}}}]")).unwrap();
            assert!(regex::Regex::new(&pattern).is_ok(), "{name}: {pattern}");
        }
    }
}
