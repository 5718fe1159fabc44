// Seed 000's processing step in C# on Mono: read user.json, deserialize all of it with
// Newtonsoft.Json, find the user by id with LINQ, SHA-512 hex of the password. Timed per
// iteration with Stopwatch.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Security.Cryptography;
using System.Text;
using Newtonsoft.Json;

class User
{
    public long id { get; set; }
    public string hash { get; set; }
}

class UsageException : Exception
{
    public UsageException(string message) : base(message) { }
}

static class Auth
{
    const string Usage = "usage: auth.exe --users PATH --id N --password P [--iterations K] [--warmup W]";

    // One iteration, the article's code: the file is read and deserialized on every call.
    static string Authenticate(string usersPath, long inputId, string inputPassword, out User user)
    {
        using (var sr = new StreamReader(usersPath))
        {
            var jsonData = sr.ReadToEnd();
            var users = JsonConvert.DeserializeObject<IEnumerable<User>>(jsonData);
            // The article's .First() throws when nobody matches; FirstOrDefault lets us report it.
            user = users.Where(x => x.id == inputId).FirstOrDefault();
            if (user == null)
                return null;

            byte[] result = SHA512.Create().ComputeHash(Encoding.UTF8.GetBytes(inputPassword));
            // The article's hex: string concatenation, one String.Format per byte.
            var hash = "";
            for (var i = 0; i < result.Length; i++)
            {
                hash += String.Format("{0:x2}", result[i]);
            }
            return hash;
        }
    }

    static int Main(string[] args)
    {
        string usersPath = null, password = null;
        long? id = null;
        long iterations = 1, warmup = 0;
        try
        {
            for (var i = 0; i < args.Length; i += 2)
            {
                if (i + 1 >= args.Length)
                    throw new UsageException(args[i] + " needs a value");
                var value = args[i + 1];
                switch (args[i])
                {
                    case "--users": usersPath = value; break;
                    case "--id": id = Integer(args[i], value, long.MinValue); break;
                    case "--password": password = value; break;
                    case "--iterations": iterations = Integer(args[i], value, 1); break;
                    case "--warmup": warmup = Integer(args[i], value, 0); break;
                    default: throw new UsageException("unknown argument " + args[i]);
                }
            }
            if (usersPath == null) throw new UsageException("--users is required");
            if (id == null) throw new UsageException("--id is required");
            if (password == null) throw new UsageException("--password is required");
        }
        catch (UsageException e)
        {
            Console.Error.WriteLine("error " + e.Message + "; " + Usage);
            return 2;
        }

        try
        {
            return Run(usersPath, id.Value, password, iterations, warmup);
        }
        catch (Exception e) when (e is IOException || e is UnauthorizedAccessException || e is JsonException)
        {
            Console.Error.WriteLine("error " + e.Message);
            return 1;
        }
    }

    static int Run(string usersPath, long id, string password, long iterations, long warmup)
    {
        var times = new List<long>();
        string last = null;
        for (long i = 0; i < warmup + iterations; i++)
        {
            var start = Stopwatch.GetTimestamp();
            User user;
            var hash = Authenticate(usersPath, id, password, out user);
            var elapsed = Stopwatch.GetTimestamp() - start;
            // Checked outside the timed part: every result is used.
            if (hash == null)
            {
                Console.Error.WriteLine("error user " + id + " not found");
                return 2;
            }
            if (user.id != id || (last != null && hash != last))
            {
                Console.Error.WriteLine("error inconsistent result");
                return 1;
            }
            last = hash;
            if (i >= warmup)
                times.Add(elapsed);
        }
        var output = new StringBuilder();
        output.Append("hash ").Append(last).Append('\n');
        foreach (var ticks in times)
        {
            // Stopwatch ticks to nanoseconds (Frequency is ticks per second).
            var ns = (long)(ticks * (1e9 / Stopwatch.Frequency));
            output.Append("ns ").Append(ns).Append('\n');
        }
        var stdout = Console.OpenStandardOutput();
        var bytes = Encoding.UTF8.GetBytes(output.ToString());
        stdout.Write(bytes, 0, bytes.Length);
        stdout.Flush();
        return 0;
    }

    static long Integer(string flag, string text, long min)
    {
        long value;
        if (!long.TryParse(text, System.Globalization.NumberStyles.AllowLeadingSign,
                System.Globalization.CultureInfo.InvariantCulture, out value))
            throw new UsageException(flag + ": not an integer: " + text);
        if (value < min)
            throw new UsageException(flag + ": must be >= " + min + ": " + text);
        return value;
    }
}
