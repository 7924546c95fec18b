import random, sys
random.seed(848)
names = ["", "a", "b", "ab", "aa", "aaa", "ba", "abab", "foo", "foo1", "foo.bar", "a-b", "a_b", "A", "AB", "Ab", "123", "1", "x",
         "x{1}", "a{", "a{2}", "a{,2}", ".", "-", "_", "{", "}", ",", ":", "<a>", "=", "P", "Q", "E", "d", "w", "s", "L", "i",
         "n", "(", ")", "[", "]", "\\", "*", "+", "?", "|", "^", "$", "é", "K", "k", "\u212a", "\u0391", " ", "\t", "\n",
         "A1_b-c.d", "a.b", "ab\n", "\x00", "S4", "!", "~", "/"]
tokens = ["a", "b", "a", "b", "A", "x", "1", "(", ")", "(?:", "(?i)", "(?-i)", "(?s)", "(?m)", "(?U)", "(?i:", "(?P<n>", "(?<m>",
          "(?=", "(?P<", "(?", "[", "]", "[^", "[:alpha:]", "[[:digit:]]", "[:foo:]", "\\d", "\\w", "\\s", "\\W", "\\D", "\\b", "\\B",
          "\\pL", "\\PL", "\\p{Greek}", "\\p{Foo}", "\\pN", "\\p{^L}", "\\Q", "\\E", "{2}", "{1,3}", "{0}", "{,2}", "{", "}", "{1001}",
          "*", "+", "?", "*?", "|", "|", "^", "$", ".", "-", "\\x41", "\\x{42}", "\\101", "\\1", "\\", ",", ":", "<", ">", "=",
          "\\.", "\\-", "\\{", "\\*", "\\z", "\\A", "\\C", "\\e", "\\<", "a-z", "-z", "\\n", "\\t", "\\_", "é", "\\x{D800}", "%"]
def esc(s):
    return "".join(("%%u%04x" % ord(c)) if c in "%\n\t\r\x00" else c for c in s)
pats = set()
# hand-picked too
while len(pats) < 4000:
    n = random.randint(1, 7)
    pats.add("".join(random.choice(tokens) for _ in range(n)))
pats = sorted(pats)
with open("in.txt", "w", encoding="utf-8") as f:
    for n in names: f.write(esc(n) + "\n")
    f.write("--\n")
    for p in pats: f.write(esc(p) + "\n")
with open("names.txt", "w", encoding="utf-8") as f:
    for n in names: f.write(esc(n) + "\n")
with open("pats.txt", "w", encoding="utf-8") as f:
    for p in pats: f.write(esc(p) + "\n")
