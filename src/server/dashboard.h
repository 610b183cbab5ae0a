// The dashboard page served at GET / (src/server/dashboard.html, embedded at build time).
#pragma once

#include <string_view>

namespace clover::server {

std::string_view DashboardHtml();

}  // namespace clover::server
