<?php

declare(strict_types=1);

// The harness has no Composer: its few files are loaded here, in order.
foreach (['Dataset', 'Adapters', 'Context', 'Backends', 'Frontend', 'Client', 'Procs', 'Measure', 'Runner', 'Report', 'Goals'] as $f) {
    require_once __DIR__ . "/$f.php";
}
