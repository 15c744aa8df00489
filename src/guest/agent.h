/* The whole host side of the agent protocol: its connection, commands and files, each in a header of its own. */
#pragma once

#include "guest/agent-client.h"
#include "guest/agent-exec.h"
#include "guest/agent-file.h"
