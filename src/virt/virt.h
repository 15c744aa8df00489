/*
 * The whole of this layer's API for those that use most of it: the
 * connection, guests, their console and accelerators, each in a header of
 * its own. A file that uses one of them includes that one.
 */
#pragma once

#include "virt/accel.h"
#include "virt/connect.h"
#include "virt/console.h"
#include "virt/domain.h"
