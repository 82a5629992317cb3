// A small test runner: finds [Test] methods, runs each on its own thread under a deadline,
// prints one line per test and then exactly "N passed, N failed". Exit code 1 on any failure.
// Usage: tests.exe [name-substring ...]   (also: tests.exe --child MODE, used by the process tests)

using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Reflection;
using System.Threading;

namespace ZeroMQ.Tests
{
    /// <summary>Marks a test. A method with one string parameter runs once per transport.</summary>
    [AttributeUsage(AttributeTargets.Method)]
    sealed class TestAttribute : Attribute
    {
        public int TimeoutSeconds = 30;
    }

    sealed class AssertionException : Exception
    {
        public AssertionException(string m) : base(m) { }
    }

    static class Assert
    {
        public static void True(bool c, string what)
        {
            if (!c) throw new AssertionException(what);
        }

        public static void Equal<T>(T expected, T actual, string what = "value")
        {
            if (!EqualityComparer<T>.Default.Equals(expected, actual))
                throw new AssertionException(what + ": expected <" + expected + ">, got <" + actual + ">");
        }

        public static void SequenceEqual<T>(IEnumerable<T> expected, IEnumerable<T> actual, string what)
        {
            var e = expected.ToList();
            var a = actual.ToList();
            if (!e.SequenceEqual(a))
                throw new AssertionException(what + ": expected [" + string.Join(", ", e) + "], got [" + string.Join(", ", a) + "]");
        }

        public static T Throws<T>(Action a, string what) where T : Exception
        {
            try
            {
                a();
            }
            catch (T e)
            {
                return e;
            }
            catch (Exception e)
            {
                throw new AssertionException(what + ": expected " + typeof(T).Name + ", got " + e.GetType().Name + ": " + e.Message);
            }
            throw new AssertionException(what + ": expected " + typeof(T).Name + ", nothing was thrown");
        }
    }

    static class Program
    {
        static readonly string[] Transports = { "tcp", "ipc", "inproc" };

        static int Main(string[] args)
        {
            if (args.Length >= 2 && args[0] == "--child") return ChildModes.Run(args[1]);
            var filters = args.Where(a => !a.StartsWith("-")).ToArray();
            var cases = new List<KeyValuePair<string, Action>>();
            foreach (Type t in typeof(Program).Assembly.GetTypes().OrderBy(t => t.Name))
            {
                foreach (MethodInfo m in t.GetMethods(BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Static)
                             .Where(m => m.GetCustomAttributes(typeof(TestAttribute), false).Length > 0)
                             .OrderBy(m => m.MetadataToken))
                {
                    var attr = (TestAttribute)m.GetCustomAttributes(typeof(TestAttribute), false)[0];
                    MethodInfo mi = m;
                    if (mi.GetParameters().Length == 1)
                    {
                        foreach (string tr in Transports)
                        {
                            string trc = tr;
                            Add(cases, t.Name + "." + mi.Name + "(" + tr + ")", attr, () => mi.Invoke(null, new object[] { trc }));
                        }
                    }
                    else
                    {
                        Add(cases, t.Name + "." + mi.Name, attr, () => mi.Invoke(null, null));
                    }
                }
            }
            if (filters.Length > 0)
                cases = cases.Where(c => filters.Any(f => c.Key.IndexOf(f, StringComparison.OrdinalIgnoreCase) >= 0)).ToList();

            Console.WriteLine("# libzmq " + ZContext.Version + " from " + (ZContext.LibraryPath ?? "the loader's search") + ", Mono/.NET " + Environment.Version);
            int passed = 0, failed = 0;
            bool hung = false;
            foreach (var c in cases)
            {
                string error = null;
                var sw = Stopwatch.StartNew();
                c.Value();
                // c.Value() stores its outcome in lastError / lastHung
                error = lastError;
                if (lastHung) hung = true;
                if (error == null)
                {
                    passed++;
                    Console.WriteLine("ok   " + c.Key + " (" + sw.ElapsedMilliseconds + " ms)");
                }
                else
                {
                    failed++;
                    Console.WriteLine("FAIL " + c.Key + " (" + sw.ElapsedMilliseconds + " ms): " + error);
                }
            }
            Util.Cleanup();
            Console.WriteLine(passed + " passed, " + failed + " failed");
            Console.Out.Flush();
            if (hung) Environment.Exit(failed > 0 ? 1 : 0); // a hung test thread must not keep the process
            return failed > 0 ? 1 : 0;
        }

        static string lastError;
        static bool lastHung;

        static void Add(List<KeyValuePair<string, Action>> cases, string name, TestAttribute attr, Action body)
        {
            cases.Add(new KeyValuePair<string, Action>(name, () => RunOne(body, attr.TimeoutSeconds)));
        }

        static void RunOne(Action body, int timeoutSeconds)
        {
            string error = null;
            var t = new Thread(() =>
            {
                try
                {
                    body();
                }
                catch (TargetInvocationException e)
                {
                    error = Describe(e.InnerException);
                }
                catch (Exception e)
                {
                    error = Describe(e);
                }
            });
            t.IsBackground = true;
            t.Start();
            lastHung = false;
            if (!t.Join(TimeSpan.FromSeconds(timeoutSeconds)))
            {
                lastHung = true;
                error = "timed out after " + timeoutSeconds + " s";
            }
            lastError = error;
        }

        static string Describe(Exception e)
        {
            if (e is AssertionException) return e.Message;
            return e.GetType().Name + ": " + e.Message + "\n" + e.StackTrace;
        }
    }
}
