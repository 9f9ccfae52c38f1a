// The trace parser: good input, and every error with its file:line:column message.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "trace.h"

namespace {

struct Parsed {
    std::vector<trace_rec> recs;
    int rc = 0;          // last trace_next result
    std::string err;
};

Parsed parse(const std::string &text, int strict = 0)
{
    Parsed p;
    FILE *f = fmemopen(const_cast<char *>(text.data()), text.size(), "r");
    if (text.empty())
        f = fopen("/dev/null", "r");
    EXPECT_NE(f, nullptr);
    trace_reader r;
    trace_init_stream(&r, f, "t.csv", strict);
    trace_rec rec;
    while ((p.rc = trace_next(&r, &rec)) == 1)
        p.recs.push_back(rec);
    if (p.rc < 0)
        p.err = r.err;
    trace_close(&r);
    fclose(f);
    return p;
}

const std::string H = "request_id,app_id,start_us,exec_us\n";

TEST(SimParser, GoodTraceWithCommentsBlanksAndSpaces)
{
    Parsed p = parse("# a comment\n\n" + H + "1,0,0,500\n  # indented comment\n\n"
                     "2, 3 , 10 ,\t7\r\n3,65535,10,0");
    ASSERT_EQ(p.rc, 0) << p.err;
    ASSERT_EQ(p.recs.size(), 3u);
    EXPECT_EQ(p.recs[1].request_id, 2u);
    EXPECT_EQ(p.recs[1].app_id, 3u);
    EXPECT_EQ(p.recs[1].start_us, 10u);
    EXPECT_EQ(p.recs[1].exec_us, 7u);
    EXPECT_EQ(p.recs[1].line, 7u);
    EXPECT_EQ(p.recs[2].app_id, 65535u);
}

TEST(SimParser, HeaderOnlyIsAnEmptyTrace)
{
    Parsed p = parse(H);
    EXPECT_EQ(p.rc, 0);
    EXPECT_TRUE(p.recs.empty());
}

TEST(SimParser, MissingHeader)
{
    EXPECT_EQ(parse("1,0,0,500\n").err,
              "t.csv:1:1: expected the header line \"request_id,app_id,start_us,exec_us\", got "
              "\"1,0,0,500\"");
    EXPECT_EQ(parse("").err, "t.csv:1:1: expected the header line "
                             "\"request_id,app_id,start_us,exec_us\", got the end of the file");
}

TEST(SimParser, WrongFieldCount)
{
    EXPECT_EQ(parse(H + "1,0,0,5\n1,0,0\n").err,
              "t.csv:3:6: expected 4 comma-separated fields (request_id,app_id,start_us,exec_us), "
              "got 3");
    EXPECT_EQ(parse(H + "1,0,0,5,9\n").err,
              "t.csv:2:8: expected 4 comma-separated fields (request_id,app_id,start_us,exec_us), "
              "got 5");
}

TEST(SimParser, NonNumeric)
{
    EXPECT_EQ(parse(H + "1,0,12x,5\n").err,
              "t.csv:2:7: start_us: expected a non-negative integer (microseconds), got \"12x\"");
    EXPECT_EQ(parse(H + "1,web,0,5\n").err,
              "t.csv:2:3: app_id: expected a non-negative integer, got \"web\"");
    EXPECT_EQ(parse(H + "1,0,0,\n").err,
              "t.csv:2:7: exec_us: expected a non-negative integer (microseconds), got an empty "
              "field");
    EXPECT_EQ(parse(H + "1,0,0,1.5\n").err,
              "t.csv:2:8: exec_us: expected a non-negative integer (microseconds), got \"1.5\"");
}

TEST(SimParser, NegativeTime)
{
    EXPECT_EQ(parse(H + "1,0,-5,10\n").err,
              "t.csv:2:5: start_us: expected a non-negative time in microseconds, got \"-5\"");
    EXPECT_EQ(parse(H + "1,0,5,-10\n").err,
              "t.csv:2:7: exec_us: expected a non-negative time in microseconds, got \"-10\"");
}

TEST(SimParser, OutOfRange)
{
    EXPECT_EQ(parse(H + "1,65536,0,1\n").err,
              "t.csv:2:3: app_id: value \"65536\" out of range (0..65535)");
    EXPECT_EQ(parse(H + "99999999999999999999999,0,0,1\n").err,
              "t.csv:2:1: request_id: expected a non-negative integer, got \"99999999999999999999999\"");
}

// Found by fuzz/trace_fuzz.c: a request_id of 2^64 or more became 2^64 - 1 instead of an error.
TEST(SimParser, RequestIdFrom2To64IsOutOfRange)
{
    Parsed ok = parse(H + "18446744073709551615,0,0,1\n");
    ASSERT_EQ(ok.rc, 0) << ok.err;
    ASSERT_EQ(ok.recs.size(), 1u);
    EXPECT_EQ(ok.recs[0].request_id, UINT64_MAX);
    EXPECT_EQ(parse(H + "18446744073709551616,0,0,1\n").err,
              "t.csv:2:1: request_id: value \"18446744073709551616\" out of range "
              "(0..18446744073709551615)");
    EXPECT_EQ(parse(H + "1,0,0,99999999999999999999\n").err,
              "t.csv:2:7: exec_us: value \"99999999999999999999\" out of range "
              "(0..1000000000000000)");
}

// Found by fuzz/trace_fuzz.c: fgets' line ended at a NUL byte, so the rest of the line was
// skipped silently (a NUL in column 1 made the line look blank; at the end of the file the text
// after the NUL was dropped), or the message said "line longer than 4096 characters".
TEST(SimParser, NulByteIsAnError)
{
    const std::string nul(1, '\0');
    EXPECT_EQ(parse(H + "1,0,0,5" + nul + "junk\n2,0,0,5\n").err,
              "t.csv:2:8: a NUL byte (is this a text file?)");
    EXPECT_EQ(parse(H + "1,0,0,5" + nul + ",junk").err,
              "t.csv:2:8: a NUL byte (is this a text file?)");
    // A file whose tail is zeroes (cut short by a crash): not a blank line, not a long line.
    Parsed tail = parse(H + "1,0,0,5\n" + std::string(10000, '\0'));
    EXPECT_EQ(tail.rc, -1);
    EXPECT_EQ(tail.err, "t.csv:3:1: a NUL byte (is this a text file?)");
    EXPECT_EQ(parse(nul + "\n" + H).err, "t.csv:1:1: a NUL byte (is this a text file?)");
}

TEST(SimParser, LongestLineIsAccepted)
{
    // 4096 characters (spaces around a field are allowed), with and without the final '\n'.
    const std::string line = "1,0,0," + std::string(TRACE_MAX_LINE - 7, ' ') + "7";
    ASSERT_EQ(line.size(), size_t(TRACE_MAX_LINE));
    Parsed p = parse(H + line + "\n" + line);
    ASSERT_EQ(p.rc, 0) << p.err;
    ASSERT_EQ(p.recs.size(), 2u);
    EXPECT_EQ(p.recs[1].exec_us, 7u);
    EXPECT_EQ(parse(H + " " + line).err, "t.csv:2:4097: line longer than 4096 characters");
    EXPECT_EQ(parse(H + " " + line + "\n").err, "t.csv:2:4097: line longer than 4096 characters");
}

TEST(SimParser, BackwardsTimes)
{
    const std::string t = H + "1,0,100,5\n2,0,50,5\n3,0,200,5\n";
    Parsed strict = parse(t, 1);
    EXPECT_EQ(strict.rc, -1);
    EXPECT_EQ(strict.err, "t.csv:3:5: start_us: times go backwards (50 after 100); --strict "
                          "requires non-decreasing start times");
    Parsed lax = parse(t, 0); // accepted and counted (the replay submits it at once and says so)
    EXPECT_EQ(lax.rc, 0);
    EXPECT_EQ(lax.recs.size(), 3u);
}

TEST(SimParser, LineTooLong)
{
    Parsed p = parse(H + "1,0,0," + std::string(5000, '7') + "\n");
    EXPECT_EQ(p.rc, -1);
    EXPECT_EQ(p.err, "t.csv:2:4097: line longer than 4096 characters");
}

TEST(SimParser, MissingFile)
{
    trace_reader r;
    EXPECT_EQ(trace_open(&r, "/nonexistent/trace.csv", 0), -1);
    EXPECT_EQ(std::string(r.err), "/nonexistent/trace.csv: cannot open: No such file or directory");
    trace_close(&r);
}

TEST(SimParser, SampleTracesParse)
{
    for (const char *name : {"steady.csv", "bursty.csv", "diurnal.csv"}) {
        std::string path = std::string(CREW_SIM_TRACES) + "/" + name;
        trace_reader r;
        ASSERT_EQ(trace_open(&r, path.c_str(), 1), 0) << r.err;
        trace_rec rec;
        int rc, n = 0;
        while ((rc = trace_next(&r, &rec)) == 1)
            n++;
        EXPECT_EQ(rc, 0) << r.err;
        EXPECT_GT(n, 100) << name;
        trace_close(&r);
    }
}

} // namespace
