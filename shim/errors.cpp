// errors.cpp: how a libtorch failure becomes the one-line message lp_error_last() gives: the
// cause out of a TorchScript traceback, without allocating (it runs while an exception, bad_alloc
// included, is being handled).
#include "shim_internal.hpp"

namespace lps {

std::string_view condense(std::string_view what) noexcept {
    // TorchScript errors carry a traceback; the cause is the last line that looks like
    // "SomethingError: ..." (the Python-side exception the script raised), or the first line.
    std::string_view best;
    bool found = false;
    size_t start = 0;
    while (start < what.size()) {
        size_t end = what.find('\n', start);
        if (end == std::string_view::npos) end = what.size();
        std::string_view line = what.substr(start, end - start);
        size_t colon = line.find("Error: ");
        if (colon != std::string_view::npos && colon < 40 && line.find(' ') > colon) {
            best = line;
            found = true;
        }
        if (!found && best.empty()) best = line; // the first line with text (some start "\n")
        start = end + 1;
    }
    while (!best.empty() && (best.back() == ' ' || best.back() == '\r'))
        best.remove_suffix(1);
    return best;
}

int fail(int status, const char *what) noexcept {
    std::string_view line = condense(what ? what : "");
    return lp_error_set(status, "%.*s", static_cast<int>(line.size()), line.data());
}

} // namespace lps
