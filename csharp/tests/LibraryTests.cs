// Which libzmq.so.5 the binding runs on: the test script runs the suite twice, on oxmq's
// dist/lib (OXMQ_CS_EXPECT=oxmq) and on Debian's libzmq (OXMQ_CS_EXPECT=system).

using System;
using System.IO;
using System.Linq;

namespace ZeroMQ.Tests
{
    static class LibraryTests
    {
        [Test]
        static void LoadedLibraryIsTheExpectedOne()
        {
            string expect = Environment.GetEnvironmentVariable("OXMQ_CS_EXPECT");
            using (new ZContext()) { }
            var libs = File.ReadAllLines("/proc/self/maps")
                .Select(l => l.Split(new[] { ' ' }, StringSplitOptions.RemoveEmptyEntries))
                .Where(f => f.Length >= 6 && Path.GetFileName(f[5]).StartsWith("libzmq.so"))
                .Select(f => f[5]).Distinct().ToList();
            Console.WriteLine("     mapped: " + string.Join(", ", libs) + "; version " + ZContext.Version);
            Assert.Equal(1, libs.Count, "exactly one libzmq mapped");
            if (expect == "oxmq")
            {
                Assert.True(libs[0].EndsWith("/dist/lib/libzmq.so.5"), "oxmq's dist/lib/libzmq.so.5: " + libs[0]);
                Assert.Equal(new Version(4, 3, 5), ZContext.Version, "oxmq reports 4.3.5");
            }
            else if (expect == "system")
            {
                Assert.True(libs[0].StartsWith("/usr/lib/"), "the system's libzmq: " + libs[0]);
            }
            else
            {
                Assert.True(expect == null, "OXMQ_CS_EXPECT is oxmq or system, not " + expect);
            }
        }
    }
}
