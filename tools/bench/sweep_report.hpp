// The sweep's part of the report: per problem, the heuristic's call ("auto") against the best
// config measured beside it, and how many problems meet issue #14's target (sweep.hpp).
#pragma once

#include <string>
#include <vector>

#include "report.hpp"

namespace tilecast::bench {

// For the text summary: one line per swept problem and the target line. "" without sweep rows.
std::string sweep_summary_text(const std::vector<Row>& rows);
// The results page's section "sweep": the same per problem, then every config's row (suite
// `sweep`) in the page's columns. "" without sweep rows.
std::string sweep_markdown(const std::vector<Row>& rows);

}  // namespace tilecast::bench
