// A JVM thread blocked under a known chain of Java calls: main -> first ->
// second -> third (x4, recursive) -> leaf -> Thread.sleep. Prints "ready PID".
public class Chain {
  static int leaf(int n) throws Exception {
    System.out.println("ready " + ProcessHandle.current().pid());
    System.out.flush();
    Thread.sleep(100000);
    return n;
  }
  static int third(int n) throws Exception { return n > 0 ? third(n - 1) + 1 : leaf(n); }
  static int second() throws Exception { return third(3) + 2; }
  static int first() throws Exception { return second() * 3; }
  public static void main(String[] args) throws Exception { System.out.println(first()); }
}
