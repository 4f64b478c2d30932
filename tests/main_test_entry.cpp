// The unit-test binary links gtest_main; this file keeps the target valid even
// when a layer has no tests yet and holds checks of the build itself.
#include <gtest/gtest.h>

#include <unistd.h>

TEST(Build, CommandLineToolIsBuilt) { EXPECT_EQ(access(FRAMEWALK_CLI, X_OK), 0) << FRAMEWALK_CLI; }
