// common.cpp -- main() for every test binary: GoogleTest plus a deadlock watchdog that fails a
// stuck test (naming it) instead of letting CI hang (BS::thread_pool's check_deadlock idea).
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace {

char current_test[256];

void on_alarm(int) {
    const char msg[] = "\nWATCHDOG: test did not finish in time (deadlock?): ";
    (void)!write(2, msg, sizeof msg - 1);
    (void)!write(2, current_test, strlen(current_test));
    (void)!write(2, "\n", 1);
    _exit(3);
}

class Watchdog : public testing::EmptyTestEventListener {
    unsigned seconds_;

public:
    explicit Watchdog(unsigned seconds) : seconds_(seconds) {}
    void OnTestStart(const testing::TestInfo &info) override {
        snprintf(current_test, sizeof current_test, "%s.%s", info.test_suite_name(), info.name());
        alarm(seconds_);
    }
    void OnTestEnd(const testing::TestInfo &) override { alarm(0); }
};

} // namespace

int main(int argc, char **argv) {
    testing::InitGoogleTest(&argc, argv);
    unsigned seconds = 120;
    if (const char *s = std::getenv("CREW_TEST_TIMEOUT"))
        seconds = static_cast<unsigned>(std::atoi(s));
    std::signal(SIGALRM, on_alarm);
    testing::UnitTest::GetInstance()->listeners().Append(new Watchdog(seconds));
    return RUN_ALL_TESTS();
}
