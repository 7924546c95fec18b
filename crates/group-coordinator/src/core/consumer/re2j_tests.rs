//! `SubscribedTopicRegex` as RE2/J 1.8 reads it: a table of what it accepts
//! (and which names each accepted pattern matches whole, RE2/J's `matches()`)
//! and what it refuses (with the description Kafka's message carries), from
//! RE2's documented syntax and RE2/J's `ParserTest` (`PARSE_TESTS`,
//! `INVALID_REGEXPS`, `ONLY_PERL`, `ONLY_POSIX`), each row checked through
//! `compile`, what validation and resolution use.

use rstest::rstest;

use super::re2j::Re2jError::{self, *};
use super::regex::{RegexRefusal, compile};

/// Accepted patterns: names the pattern matches whole, and names it does not.
#[rstest]
// Literals, alternation, grouping, whole-name matching.
#[case("foo", &["foo"], &["foo1", "xfoo", "fo"])]
#[case("foo.*", &["foo", "foo.bar"], &["bar"])]
#[case("a|b", &["a", "b"], &["ab"])]
#[case("(foo|bar)-[0-9]+", &["foo-1", "bar-22"], &["foo-", "baz-1"])]
#[case("", &[""], &["a"])]
#[case("|", &[""], &["a"])]
#[case("a|", &["a", ""], &["b"])]
#[case("(|a)b", &["b", "ab"], &["a"])]
#[case("a()", &["a"], &["b"])]
#[case("a(?:)b", &["ab"], &["a"])]
// Repetitions, their limit (1000), and braces that are no repetition.
#[case("a{2}", &["aa"], &["a", "aaa"])]
#[case("a{2,}", &["aa", "aaaa"], &["a"])]
#[case("a{2,3}?", &["aa", "aaa"], &["aaaa"])]
#[case("ba{0}", &["b"], &["ba"])]
#[case("a{1000}", &[], &["a"])]
#[case("a{0,1000}", &["aaa"], &["b"])]
#[case("a{,2}", &["a{,2}"], &["aa"])]
#[case("a{", &["a{"], &["a"])]
#[case("{", &["{"], &[""])]
#[case("}", &["}"], &[""])]
#[case("a{01}", &["a{01}"], &["a"])]
#[case("x{1001", &["x{1001"], &["x"])]
#[case("x{2,1", &["x{2,1"], &["xx"])]
#[case("a*{", &["aa{"], &["aa"])]
#[case("a*?", &["aaa"], &["b"])]
// A repetition after a flag group or an empty `\Q\E` applies to what precedes.
#[case("a(?i)*", &["aaa", ""], &["A"])]
#[case("a\\Q\\E*", &["aaa"], &["b"])]
#[case("(a)*(?i)*", &["aa"], &["b"])]
// Repetitions of empty-width assertions.
#[case("^*a", &["a"], &["b"])]
#[case("a\\b+", &["a"], &["ab"])]
#[case("a$?", &["a"], &["b"])]
// Escapes: punctuation is itself, C escapes, octal, hex.
#[case("\\.\\^\\$\\\\", &[".^$\\"], &["a"])]
#[case("\\_\\-", &["_-"], &["a"])]
#[case("\\<a\\>", &["<a>"], &["a"])]
#[case("\\/\\@\\#", &["/@#"], &["a"])]
#[case("\\é", &["é"], &["e"])]
#[case("\\a\\f\\t\\n\\r\\v", &["\x07\x0c\t\n\r\x0b"], &["a"])]
#[case("\\x41\\x{42}", &["AB"], &["ab"])]
#[case("\\x{10FFFF}", &["\u{10FFFF}"], &["a"])]
#[case("\\101", &["A"], &["101"])]
#[case("\\0", &["\0"], &["0"])]
#[case("\\1234", &["S4"], &["S"])]
#[case("\\08", &["\u{0}8"], &["8"])]
#[case("[\\012-\\234]\\141", &["\na"], &["a"])]
// Surrogates: RE2/J accepts them; no topic name holds one.
#[case("\\x{D800}", &[], &["a", ""])]
#[case("[\\x{D7FF}-\\x{E000}]", &["\u{D7FF}", "\u{E000}"], &["a"])]
#[case("[\\x{D800}-\\x{DFFF}]a", &[], &["a"])]
// \Q...\E.
#[case("\\Qa.b\\E", &["a.b"], &["axb"])]
#[case("\\Qa.b", &["a.b"], &["axb"])]
#[case("\\Q+|*?{[\\E", &["+|*?{["], &["+"])]
#[case("\\Qab\\E+", &["abbb"], &["abab"])]
#[case("\\Q\\\\E", &["\\"], &[""])]
// Anchors and word boundaries (ASCII, as RE2's).
#[case("\\Afoo\\z", &["foo"], &["foo1"])]
#[case("^foo$", &["foo"], &["foo1"])]
#[case("(?m)^a$", &["a"], &["b"])]
#[case("\\bfoo\\b", &["foo"], &["foox"])]
#[case("a\\Bb", &["ab"], &["a"])]
#[case("é\\b", &[], &["é"])]
// Perl classes are ASCII in RE2.
#[case("\\d+", &["123"], &["12a", "٣"])]
#[case("\\w+", &["a_1"], &["a-1", "é"])]
#[case("\\W", &["-", "é"], &["a"])]
#[case("\\s\\S", &[" a", "\ta"], &["ab", "\u{0b}a"])]
#[case("[\\d]", &["5"], &["a"])]
#[case("[^\\d]", &["a"], &["5"])]
#[case("[\\D\\s]", &["a", " "], &["5"])]
#[case("(?i)\\w", &["K", "\u{212A}"], &["-"])]
// POSIX classes.
#[case("[[:alpha:]]+", &["abc"], &["a1"])]
#[case("[[:^digit:]]+", &["abc"], &["a1"])]
#[case("[[:word:].-]+", &["a_b.c-d"], &["a b"])]
#[case("[[:lower:]]", &["a"], &["A"])]
#[case("(?i)[[:lower:]]", &["a", "A"], &["1"])]
#[case("[^[:lower:]]", &["A"], &["a"])]
#[case("[[:punct:]]+", &["!/:@[`{~"], &["a"])]
#[case("[[:space:]]", &["\u{0b}"], &["a"])]
#[case("[[:alpha:]-z]", &["-", "z"], &["1"])]
// Unicode classes.
#[case("\\pN+", &["123", "٣"], &["a"])]
#[case("\\PL+", &["123"], &["a1"])]
#[case("\\p{^L}", &["1"], &["a"])]
#[case("\\P{^L}", &["a"], &["1"])]
#[case("\\p{Greek}", &["α"], &["a"])]
#[case("[\\p{Lu}\\d]+", &["A1"], &["a"])]
#[case("(?i)[\\p{Lu}]", &["a", "A"], &["1"])]
#[case("\\p{Braille}", &["\u{2800}"], &["a"])]
#[case("\\pZ", &[" "], &["a"])]
#[case("\\p{Any}", &["a", "\n"], &["ab"])]
#[case("\\p{^Any}", &[], &["a"])]
#[case("\\p{Cs}", &[], &["a"])]
#[case("\\P{Cs}", &["a"], &["ab"])]
#[case("\\p{Unknown}", &["\u{E000}"], &["a"])]
// Classes: ranges, `]` and `-` where they are literal, negation, folding.
#[case("[a-b-c]", &["a", "-", "c"], &["d"])]
#[case("[]a]", &["]", "a"], &["b"])]
#[case("[^]a]", &["b"], &["]", "a"])]
#[case("[-a]", &["-", "a"], &["b"])]
#[case("[a-]", &["-", "a"], &["b"])]
#[case("[\\x{41}-\\x5a]+", &["ABC"], &["abc"])]
#[case("[α-ε☺]", &["γ", "☺"], &["a"])]
#[case("[^a]", &["b", "\n"], &["a"])]
#[case("(?i)[a-c]", &["B"], &["d"])]
#[case("[&&a]", &["&", "a"], &["b"])]
#[case("[a~~b]", &["~"], &["c"])]
#[case("[\\x00-\\x{10FFFF}]", &["a"], &[""])]
#[case("[^\\x00-\\x{10FFFF}]", &[], &["a"])]
// Flags: i, m, s, U, scoped, negated, persisting across `|` within a group.
#[case("(?i)foo", &["FOO", "Foo"], &["fo"])]
#[case("(?i:F)oo", &["foo", "Foo"], &["FOO"])]
#[case("F(?i)oo", &["FOO", "FoO"], &["fOO"])]
#[case("(?i)a|b", &["A", "B"], &["c"])]
#[case("a(?i)|b", &["a", "B"], &["A"])]
#[case("(?i)a(?-i)|b", &["A", "b"], &["B"])]
#[case("(x(?i)a|b)c", &["xac", "xAc", "Bc"], &["xaC"])]
#[case("(?i)(?-i)a", &["a"], &["A"])]
#[case("(?i-s:a.)", &["Ab"], &["A\n"])]
#[case("(?s).", &["\n"], &["ab"])]
#[case("(?-s).", &["a"], &["\n"])]
#[case("(?U)a+", &["aaa"], &["b"])]
#[case("(?ii)a", &["A"], &["b"])]
#[case("(?)a", &["a"], &["A"])]
#[case("(?i)k", &["K", "\u{212A}"], &["x"])]
// Named groups (RE2/J takes both forms, names of word characters).
#[case("(?P<name>a)b", &["ab"], &["b"])]
#[case("(?<n1>a)(?P<n2>b)", &["ab"], &["a"])]
#[case("(?P<1>a)", &["a"], &["1"])]
fn accepted(#[case] pattern: &str, #[case] matching: &[&str], #[case] other: &[&str]) {
    let re = compile(pattern).unwrap_or_else(|e| panic!("{pattern:?} refused: {e}"));
    for name in matching {
        assert!(re.is_match(name), "{pattern:?} should match {name:?} ({re})");
    }
    for name in other {
        assert!(!re.is_match(name), "{pattern:?} should not match {name:?} ({re})");
    }
}

/// Refused patterns, with RE2/J's description (the first error from the left).
#[rstest]
// Parentheses.
#[case("(", MissingParen)]
#[case(")", Internal)]
#[case("(a", MissingParen)]
#[case("(a|b|", MissingParen)]
#[case("(a|b", MissingParen)]
#[case("a)|(b", Internal)]
#[case("(a))", Internal)]
#[case(")(", Internal)]
// Classes.
#[case("[a-z", MissingBracket)]
#[case("([a-z)", MissingBracket)]
#[case("([", MissingBracket)]
#[case("[a-", MissingBracket)]
#[case("[]", MissingBracket)]
#[case("[[:alpha:]", MissingBracket)]
#[case("[a-Z]", InvalidCharRange)]
#[case("(?i)[a-Z]", InvalidCharRange)]
#[case("[z-a]", InvalidCharRange)]
#[case("[[:foo:]]", InvalidCharRange)]
#[case("[x[:y]z:]", InvalidCharRange)]
#[case("[\\b]", InvalidEscape)]
#[case("[\\Q]\\E]", InvalidEscape)]
#[case("[a-\\d]", InvalidEscape)]
#[case("[a\\", TrailingBackslash)]
// Repetitions.
#[case("x{1001}", InvalidRepeatSize)]
#[case("x{9876543210}", InvalidRepeatSize)]
#[case("x{2,1}", InvalidRepeatSize)]
#[case("x{1,9876543210}", InvalidRepeatSize)]
#[case("a{100000}", InvalidRepeatSize)]
#[case("a{100000,}", InvalidRepeatSize)]
#[case("x{1001,}", InvalidRepeatSize)]
#[case("x{0,1001}", InvalidRepeatSize)]
#[case("*", MissingRepeatArgument)]
#[case("+a", MissingRepeatArgument)]
#[case("a|*", MissingRepeatArgument)]
#[case("(*)", MissingRepeatArgument)]
#[case("(?i)*", MissingRepeatArgument)]
#[case("{2}", MissingRepeatArgument)]
#[case("a++", InvalidRepeatOp)]
#[case("a**", InvalidRepeatOp)]
#[case("a?*", InvalidRepeatOp)]
#[case("a+*", InvalidRepeatOp)]
#[case("a{1}*", InvalidRepeatOp)]
#[case(".{1}{2}.{3}", InvalidRepeatOp)]
#[case("a*+", InvalidRepeatOp)]
#[case("a*?+", InvalidRepeatOp)]
#[case("a{2}{3}", InvalidRepeatOp)]
#[case("a{*", InvalidRepeatOp)]
#[case("**", MissingRepeatArgument)]
// Named groups.
#[case("(?P<name>a", MissingParen)]
#[case("(?P<name>", MissingParen)]
#[case("(?P<name", InvalidNamedCapture)]
#[case("(?P<x y>a)", InvalidNamedCapture)]
#[case("(?P<>a)", InvalidNamedCapture)]
#[case("(?<name>a", MissingParen)]
#[case("(?<name>", MissingParen)]
#[case("(?<name", InvalidNamedCapture)]
#[case("(?<x y>a)", InvalidNamedCapture)]
#[case("(?<>a)", InvalidNamedCapture)]
#[case("(?P<é>a)", InvalidNamedCapture)]
#[case("(?P<foo>bar)(?P<foo>baz)", DuplicateNamedCapture)]
#[case("(?P<foo>bar)(?<foo>baz)", DuplicateNamedCapture)]
#[case("(?<foo>bar)(?P<foo>baz)", DuplicateNamedCapture)]
#[case("(?<foo>bar)(?<foo>baz)", DuplicateNamedCapture)]
// Perl syntax RE2 lacks: lookaround, comments, other flags, other group forms.
#[case("(?=a)", InvalidPerlOp)]
#[case("(?!a)", InvalidPerlOp)]
#[case("(?<=a)b", InvalidNamedCapture)]
#[case("(?<!a)b", InvalidNamedCapture)]
#[case("(?#c)", InvalidPerlOp)]
#[case("(?x)a", InvalidPerlOp)]
#[case("(?u)a", InvalidPerlOp)]
#[case("(?'n'a)", InvalidPerlOp)]
#[case("(?P=n)", InvalidPerlOp)]
#[case("(?>a)", InvalidPerlOp)]
#[case("(?i-)a", InvalidPerlOp)]
#[case("(?-)a", InvalidPerlOp)]
#[case("(?--i)a", InvalidPerlOp)]
#[case("(?i-i-s)a", InvalidPerlOp)]
#[case("(?", InvalidPerlOp)]
#[case("(?i", InvalidPerlOp)]
// Escapes RE2/J does not know.
#[case("\\C", InvalidEscape)]
#[case("\\Z", InvalidEscape)]
#[case("\\G", InvalidEscape)]
#[case("\\K", InvalidEscape)]
#[case("\\R", InvalidEscape)]
#[case("\\X", InvalidEscape)]
#[case("\\h", InvalidEscape)]
#[case("\\e", InvalidEscape)]
#[case("\\E", InvalidEscape)]
#[case("\\N{DIGIT ONE}", InvalidEscape)]
#[case("\\1", InvalidEscape)]
#[case("(a)\\1", InvalidEscape)]
#[case("\\8", InvalidEscape)]
#[case("\\x", InvalidEscape)]
#[case("\\xv", InvalidEscape)]
#[case("\\x4", InvalidEscape)]
#[case("\\xg1", InvalidEscape)]
#[case("\\x{}", InvalidEscape)]
#[case("\\x{41", InvalidEscape)]
#[case("\\x{110000}", InvalidEscape)]
#[case("a\\", TrailingBackslash)]
#[case("\\", TrailingBackslash)]
// Unicode classes RE2/J 1.8 does not know.
#[case("\\pX", InvalidCharRange)]
#[case("\\p{Foo}", InvalidCharRange)]
#[case("\\p{IsGreek}", InvalidCharRange)]
#[case("\\p{Cn}", InvalidCharRange)]
#[case("\\p{Alphabetic}", InvalidCharRange)]
#[case("\\p{Chakma}", InvalidCharRange)]
#[case("\\p{L", InvalidCharRange)]
#[case("\\p", InvalidCharRange)]
#[case("\\p{}", InvalidCharRange)]
#[case("[\\p{Foo}]", InvalidCharRange)]
fn refused(#[case] pattern: &str, #[case] error: Re2jError) {
    assert_eq!(compile(pattern).err(), Some(RegexRefusal::Syntax(error)), "{pattern:?}");
}

/// The descriptions are RE2/J's, word for word (`Parser.ERR_*`).
#[test]
fn descriptions_are_re2js() {
    let described = [
        (Internal, "regexp/syntax: internal error"),
        (InvalidCharRange, "invalid character class range"),
        (InvalidEscape, "invalid escape sequence"),
        (InvalidNamedCapture, "invalid named capture"),
        (InvalidPerlOp, "invalid or unsupported Perl syntax"),
        (InvalidRepeatOp, "invalid nested repetition operator"),
        (InvalidRepeatSize, "invalid repeat count"),
        (MissingBracket, "missing closing ]"),
        (MissingParen, "missing closing )"),
        (MissingRepeatArgument, "missing argument to repetition operator"),
        (TrailingBackslash, "trailing backslash at end of expression"),
        (DuplicateNamedCapture, "duplicate capture group name"),
    ];
    for (error, text) in described {
        assert_eq!(RegexRefusal::Syntax(error).to_string(), text);
    }
}

/// Every regexp of RE2/J's `ParserTest.PARSE_TESTS` (and `ONLY_PERL`) parses.
#[test]
fn re2j_parser_test_regexps_are_accepted() {
    let accepted = [
        "a",
        "a.",
        "a.b",
        "ab",
        "a.b.c",
        "abc",
        "a|^",
        "a|b",
        "(a)",
        "(a)|b",
        "a*",
        "a+",
        "a?",
        "a{2}",
        "a{2,3}",
        "a{2,}",
        "a*?",
        "a+?",
        "a??",
        "a{2}?",
        "a{2,3}?",
        "a{2,}?",
        "x{1001",
        "x{9876543210",
        "x{9876543210,",
        "x{2,1",
        "x{1,9876543210",
        "",
        "|",
        "|x|",
        ".",
        "^",
        "$",
        "\\|",
        "\\(",
        "\\)",
        "\\*",
        "\\+",
        "\\?",
        "{",
        "}",
        "\\.",
        "\\^",
        "\\$",
        "\\\\",
        "[ace]",
        "[abc]",
        "[a-z]",
        "[a]",
        "\\-",
        "-",
        "\\_",
        "abc",
        "abc|def",
        "abc|def|ghi",
        "[[:lower:]]",
        "[^[:lower:]]",
        "[[:^lower:]]",
        "(?i)[[:lower:]]",
        "(?i)[a-z]",
        "(?i)[^[:lower:]]",
        "(?i)[[:^lower:]]",
        "\\d",
        "\\D",
        "\\s",
        "\\S",
        "\\w",
        "\\W",
        "(?i)\\w",
        "(?i)\\W",
        "[^\\\\]",
        "\\p{Braille}",
        "\\P{Braille}",
        "\\p{^Braille}",
        "\\P{^Braille}",
        "\\pZ",
        "[\\p{Braille}]",
        "[\\P{Braille}]",
        "[\\p{^Braille}]",
        "[\\P{^Braille}]",
        "[\\pZ]",
        "\\p{Lu}",
        "[\\p{Lu}]",
        "(?i)[\\p{Lu}]",
        "\\p{Any}",
        "\\p{^Any}",
        "[\\012-\\234]\\141",
        "[\\x{41}-\\x7a]\\x61",
        "a{,2}",
        "\\.\\^\\$\\\\",
        "[a-zABC]",
        "[^a]",
        "[α-ε☺]",
        "a*{",
        "(?:ab)*",
        "(ab)*",
        "ab|cd",
        "a(b|c)d",
        "(?:a)",
        "(?:ab)(?:cd)",
        "(?:a+b+)(?:c+d+)",
        "(?:a+|b+)|(?:c+|d+)",
        "(?:a|b)|(?:c|d)",
        "a|.",
        ".|a",
        "(?:[abc]|A|Z|hello|world)",
        "(?:[abc]|A|Z)",
        "\\Q+|*?{[\\E",
        "\\Q+\\E+",
        "\\Qab\\E+",
        "\\Q\\\\E",
        "\\Q\\\\\\E",
        "(?m)^",
        "(?m)$",
        "(?-m)^",
        "(?-m)$",
        "(?m)\\A",
        "(?m)\\z",
        "(?-m)\\A",
        "(?-m)\\z",
        "(?P<name>a)",
        "(?<name>a)",
        "[Aa]",
        "[\\x{100}\\x{101}]",
        "[Δδ]",
        "abcde",
        "[Aa][Bb]cd",
        "(?:.)",
        "(?:x|(?:xa))",
        "(?:.|(?:.a))",
        "(?:A(?:A|a))",
        "(?:A|a)",
        "A|(?:A|a)",
        "(?s).",
        "(?-s).",
        "(?:(?:^).)",
        "(?-s)(?:(?:^).)",
        "[\\x00-\\x{10FFFF}]",
        "[^\\x00-\\x{10FFFF}]",
        "(?:[a][a-])",
        "abc|abd",
        "a(?:b)c|abd",
        "abc|x|abd",
        "(?i)abc|ABD",
        "[ab]c|[ab]d",
        ".c|.d",
        "x{2}|x{2}[0-9]",
        "x{2}y|x{2}[0-9]y",
        "a.*?c|a.*?b",
        "[a-b-c]",
        "\\Qabc\\E",
        "\\Q*+?{[\\E",
        "\\Q\\\\\\\\E",
        "\\Q\\\\\\\\\\E",
    ];
    for pattern in accepted {
        assert!(compile(pattern).is_ok(), "{pattern:?}: {:?}", compile(pattern).err());
    }
}

proptest::proptest! {
    /// Whatever RE2/J accepts, the rewrite is a pattern the `regex` crate
    /// compiles (short ones never reach its size limits), and the rewrite
    /// matches what the source matches literally when it is a plain word.
    #[test]
    fn every_accepted_pattern_compiles(pattern in "[ab(){}*+?|\\\\^$.,:<>=\\[\\]\\-PQEdwspLi0-9x-]{0,16}") {
        if let Ok(translated) = super::re2j::translate(&pattern) {
            let compiled = regex::Regex::new(&translated);
            proptest::prop_assert!(compiled.is_ok(), "{:?} -> {:?}: {:?}", pattern, translated, compiled.err());
        }
    }

    /// A pattern of letters and digits matches itself and nothing else.
    #[test]
    fn plain_words_match_themselves(word in "[a-zA-Z0-9]{1,12}", other in "[a-zA-Z0-9._-]{1,12}") {
        let re = compile(&word).unwrap();
        proptest::prop_assert!(re.is_match(&word));
        proptest::prop_assert_eq!(re.is_match(&other), other == word);
    }
}

/// `%uXXXX` escapes of the recorded verdicts.
fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(at) = rest.find("%u") {
        out.push_str(&rest[..at]);
        let code = u32::from_str_radix(&rest[at + 2..at + 6], 16).unwrap();
        out.push(char::from_u32(code).unwrap());
        rest = &rest[at + 6..];
    }
    out.push_str(rest);
    out
}

/// RE2/J 1.8's own verdicts on 4000 random patterns over RE2's tokens
/// (`tests/data/re2j/verdicts.txt`, recorded by running RE2/J): each refused with
/// RE2/J's description, or accepted and matching exactly the names RE2/J's
/// `matches()` matches.
#[test]
fn recorded_re2j_verdicts_agree() {
    let data = include_str!("../../../tests/data/re2j/verdicts.txt");
    let mut lines = data.lines().filter(|l| !l.starts_with('#'));
    let names: Vec<String> = lines.by_ref().take_while(|l| *l != "--").map(unescape).collect();
    let mut checked = 0;
    let mut differences = Vec::new();
    for line in lines {
        let (pattern, verdict) = line.split_once('\t').unwrap();
        let pattern = unescape(pattern);
        let ours = match compile(&pattern) {
            Ok(re) => format!(
                "ok {}",
                names.iter().map(|n| if re.is_match(n) { '1' } else { '0' }).collect::<String>()
            ),
            Err(e) => format!("err {e}"),
        };
        if ours != verdict {
            differences.push(format!("{pattern:?}: RE2/J {verdict}, ours {ours}"));
        }
        checked += 1;
    }
    assert_eq!(checked, 4_000);
    assert!(differences.is_empty(), "{} differences:\n{}", differences.len(), differences.join("\n"));
}
