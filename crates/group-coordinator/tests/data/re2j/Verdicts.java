import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.util.*;

/** Reads NAMES then patterns (one per line, \n and \\ escaped), prints RE2/J's verdict per pattern. */
public class Verdicts {
  static String unescape(String s) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '%' && i + 4 < s.length() + 0 && s.charAt(i+1) == 'u') {
        b.append((char) Integer.parseInt(s.substring(i + 2, i + 6), 16)); i += 5;
      } else b.append(c);
    }
    return b.toString();
  }
  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(new FileInputStream(args[0]), StandardCharsets.UTF_8));
    List<String> names = new ArrayList<>();
    String line;
    while (!(line = in.readLine()).equals("--")) names.add(unescape(line));
    PrintStream out = new PrintStream(new FileOutputStream(args[1]), true, "UTF-8");
    while ((line = in.readLine()) != null) {
      String p = unescape(line);
      try {
        Pattern re = Pattern.compile(p);
        StringBuilder m = new StringBuilder();
        for (String n : names) m.append(re.matcher(n).matches() ? '1' : '0');
        out.println("ok " + m);
      } catch (PatternSyntaxException e) {
        out.println("err " + e.getDescription());
      }
    }
  }
}
