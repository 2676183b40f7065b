// The object the precompiled gtest header of the tests is built with
// (tests/CMakeLists.txt): nothing of its own.
