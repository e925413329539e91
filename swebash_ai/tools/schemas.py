"""The built-in tools' argument schemas, generated from their pydantic models: do not edit.

Regenerate with ``python -m swebash_ai.docgen``; ``--check`` and a test fail when it is stale. A tool whose
fingerprint no longer matches its signature gets its schema from its model instead (see tools/registry.py).
"""

from typing import Any

SCHEMAS: dict[str, dict[str, Any]] = {}

SCHEMAS['read_file'] = {'fingerprint': 'f67b1565bb84307b',
 'parameters': {'additionalProperties': False,
                'properties': {'path': {'description': 'File path, relative to the working directory (or '
                                                       'absolute, or starting with ~/).',
                                        'type': 'string'},
                               'start_line': {'default': 1,
                                              'description': 'First line to show, counting from 1.',
                                              'minimum': 1,
                                              'type': 'integer'},
                               'end_line': {'anyOf': [{'minimum': 1, 'type': 'integer'}, {'type': 'null'}],
                                            'default': None,
                                            'description': 'Last line to show (inclusive); omit to read to '
                                                           'the end.'}},
                'required': ['path'],
                'type': 'object'}}

SCHEMAS['list_dir'] = {'fingerprint': '8e5fd36b5814b029',
 'parameters': {'additionalProperties': False,
                'properties': {'path': {'default': '.',
                                        'description': 'Directory to list, relative to the working '
                                                       'directory.',
                                        'type': 'string'},
                               'recursive': {'default': False,
                                             'description': 'Also list subdirectories, down to max_depth '
                                                            'levels.',
                                             'type': 'boolean'},
                               'max_depth': {'default': 2,
                                             'description': 'Levels to go down when recursive (1 = only this '
                                                            'directory).',
                                             'maximum': 10,
                                             'minimum': 1,
                                             'type': 'integer'},
                               'show_hidden': {'default': False,
                                               'description': 'Include names starting with a dot.',
                                               'type': 'boolean'},
                               'pattern': {'anyOf': [{'type': 'string'}, {'type': 'null'}],
                                           'default': None,
                                           'description': 'Glob on entry names, e.g. "*.py"; directories are '
                                                          'still walked when recursive.'},
                               'max_entries': {'default': 200,
                                               'description': 'Most entries to show.',
                                               'maximum': 2000,
                                               'minimum': 1,
                                               'type': 'integer'}},
                'type': 'object'}}

SCHEMAS['exists'] = {'fingerprint': '7dd30e1bfabcc22d',
 'parameters': {'additionalProperties': False,
                'properties': {'path': {'description': 'Path to check, relative to the working directory.',
                                        'type': 'string'}},
                'required': ['path'],
                'type': 'object'}}

SCHEMAS['metadata'] = {'fingerprint': '2bf75997ee2f402b',
 'parameters': {'additionalProperties': False,
                'properties': {'path': {'description': 'Path to inspect, relative to the working directory.',
                                        'type': 'string'}},
                'required': ['path'],
                'type': 'object'}}

SCHEMAS['write_file'] = {'fingerprint': '07b0807187e2c5c3',
 'parameters': {'additionalProperties': False,
                'properties': {'path': {'description': 'File to write, relative to the working directory.',
                                        'type': 'string'},
                               'content': {'description': 'The full text to write (or to add, with '
                                                          'mode="append").',
                                           'type': 'string'},
                               'mode': {'default': 'overwrite',
                                        'description': '"overwrite" replaces the file, "append" adds to its '
                                                       'end, "create" fails if it exists.',
                                        'enum': ['overwrite', 'append', 'create'],
                                        'type': 'string'},
                               'create_dirs': {'default': True,
                                               'description': 'Create missing parent directories.',
                                               'type': 'boolean'}},
                'required': ['path', 'content'],
                'type': 'object'}}

SCHEMAS['edit_file'] = {'fingerprint': '131532f04873a167',
 'parameters': {'additionalProperties': False,
                'properties': {'path': {'description': 'File to edit, relative to the working directory.',
                                        'type': 'string'},
                               'old': {'description': 'The exact text to find.',
                                       'minLength': 1,
                                       'type': 'string'},
                               'new': {'description': 'The text to put in its place.', 'type': 'string'},
                               'count': {'default': 1,
                                         'description': 'How many occurrences must match (all are replaced); '
                                                        '0 replaces all, however many.',
                                         'maximum': 10000,
                                         'minimum': 0,
                                         'type': 'integer'}},
                'required': ['path', 'old', 'new'],
                'type': 'object'}}

SCHEMAS['search'] = {'fingerprint': 'aeecb16b355d3063',
 'parameters': {'additionalProperties': False,
                'properties': {'pattern': {'description': 'Text to find; a Python regular expression when '
                                                          'regex is true.',
                                           'minLength': 1,
                                           'type': 'string'},
                               'path': {'default': '.',
                                        'description': 'Directory (or single file) to search, relative to '
                                                       'the working directory.',
                                        'type': 'string'},
                               'regex': {'default': False,
                                         'description': 'Treat pattern as a regular expression (Python re '
                                                        'syntax) instead of literal text.',
                                         'type': 'boolean'},
                               'case_sensitive': {'default': False,
                                                  'description': 'Match letter case exactly.',
                                                  'type': 'boolean'},
                               'include': {'anyOf': [{'items': {'type': 'string'}, 'type': 'array'},
                                                     {'type': 'null'}],
                                           'default': None,
                                           'description': 'Only search files matching one of these globs, '
                                                          'e.g. ["*.py", "src/*"] (a glob without "/" '
                                                          'matches the file name, with "/" the path relative '
                                                          'to the searched directory).'},
                               'exclude': {'anyOf': [{'items': {'type': 'string'}, 'type': 'array'},
                                                     {'type': 'null'}],
                                           'default': None,
                                           'description': 'Skip files and directories matching one of these '
                                                          'globs, e.g. ["tests", "*.min.js"].'},
                               'context_lines': {'default': 0,
                                                 'description': 'Lines of context to show before and after '
                                                                'each match.',
                                                 'maximum': 10,
                                                 'minimum': 0,
                                                 'type': 'integer'},
                               'max_results': {'default': 50,
                                               'description': 'Most matching lines to show (all are '
                                                              'counted).',
                                               'maximum': 500,
                                               'minimum': 1,
                                               'type': 'integer'}},
                'required': ['pattern'],
                'type': 'object'}}

SCHEMAS['find_files'] = {'fingerprint': '7fad5f1254ea6829',
 'parameters': {'additionalProperties': False,
                'properties': {'pattern': {'description': 'Glob pattern: * and ? within a name, ** across '
                                                          'directories, [abc] and {a,b} alternatives.',
                                           'maxLength': 500,
                                           'minLength': 1,
                                           'type': 'string'},
                               'path': {'default': '.',
                                        'description': 'Directory to search, relative to the working '
                                                       'directory.',
                                        'type': 'string'},
                               'max_results': {'default': 200,
                                               'description': 'Most paths to list (all are counted).',
                                               'maximum': 1000,
                                               'minimum': 1,
                                               'type': 'integer'},
                               'include_ignored': {'default': False,
                                                   'description': 'Also list files that .gitignore excludes '
                                                                  '(build output, node_modules...).',
                                                   'type': 'boolean'}},
                'required': ['pattern'],
                'type': 'object'}}

SCHEMAS['run_command'] = {'fingerprint': 'f4c6d583b3247864',
 'parameters': {'additionalProperties': False,
                'properties': {'command': {'description': 'The bash command line, e.g. `ls -la src` or '
                                                          '`python -m pytest -q tests/test_x.py`.',
                                           'type': 'string'},
                               'timeout': {'anyOf': [{'maximum': 300, 'minimum': 1, 'type': 'integer'},
                                                     {'type': 'null'}],
                                           'default': None,
                                           'description': 'Seconds before the command is killed (default '
                                                          'from the settings, at most 300; not with '
                                                          'background).'},
                               'cwd': {'anyOf': [{'type': 'string'}, {'type': 'null'}],
                                       'default': None,
                                       'description': 'Directory to run in, relative to the current '
                                                      'directory (default: the current directory).'},
                               'background': {'default': False,
                                              'description': 'Start it in the background (a dev server, a '
                                                             'watcher) and return at once; it runs until '
                                                             'stop_process or the end of the session.',
                                              'type': 'boolean'}},
                'required': ['command'],
                'type': 'object'}}

SCHEMAS['read_process'] = {'fingerprint': '6944414566686fb2',
 'parameters': {'additionalProperties': False,
                'properties': {'id': {'description': 'The process id run_command returned, e.g. `p1`.',
                                      'type': 'string'},
                               'wait_seconds': {'default': 0,
                                                'description': 'Wait up to this many seconds for new output '
                                                               'or the exit (0: answer at once; at most 60).',
                                                'maximum': 60,
                                                'minimum': 0,
                                                'type': 'number'}},
                'required': ['id'],
                'type': 'object'}}

SCHEMAS['stop_process'] = {'fingerprint': '941e4e3ecc5daa7e',
 'parameters': {'additionalProperties': False,
                'properties': {'id': {'description': 'The process id run_command returned, e.g. `p1`.',
                                      'type': 'string'}},
                'required': ['id'],
                'type': 'object'}}

SCHEMAS['web_search'] = {'fingerprint': 'f0e1562caf1bcebb',
 'parameters': {'additionalProperties': False,
                'properties': {'query': {'description': 'What to search for, as you would type it in a '
                                                        'search box (at most 500 characters).',
                                         'maxLength': 500,
                                         'minLength': 1,
                                         'type': 'string'},
                               'num_results': {'default': 5,
                                               'description': 'How many results to return (1-10).',
                                               'maximum': 10,
                                               'minimum': 1,
                                               'type': 'integer'}},
                'required': ['query'],
                'type': 'object'}}

SCHEMAS['fetch_url'] = {'fingerprint': '661af19e68c89e25',
 'parameters': {'additionalProperties': False,
                'properties': {'url': {'description': 'The full http:// or https:// URL to fetch.',
                                       'maxLength': 2000,
                                       'minLength': 1,
                                       'type': 'string'},
                               'max_chars': {'default': 20000,
                                             'description': 'The most characters of text to return '
                                                            '(100-200000); longer pages are cut with a note.',
                                             'maximum': 200000,
                                             'minimum': 100,
                                             'type': 'integer'}},
                'required': ['url'],
                'type': 'object'}}

SCHEMAS['update_plan'] = {'fingerprint': '8c59eb96af916140',
 'parameters': {'additionalProperties': False,
                'properties': {'plan': {'description': 'The steps in order, each {"step": "...", "status": '
                                                       '"pending", "in_progress" or "completed"}.',
                                        'items': {'additionalProperties': False,
                                                  'description': 'One step of the plan.',
                                                  'properties': {'step': {'description': 'What to do, in a '
                                                                                         'few words.',
                                                                          'maxLength': 300,
                                                                          'minLength': 1,
                                                                          'type': 'string'},
                                                                 'status': {'description': 'pending, '
                                                                                           'in_progress (at '
                                                                                           'most one step) '
                                                                                           'or completed.',
                                                                            'enum': ['pending',
                                                                                     'in_progress',
                                                                                     'completed'],
                                                                            'type': 'string'}},
                                                  'required': ['step', 'status'],
                                                  'type': 'object'},
                                        'maxItems': 50,
                                        'type': 'array'},
                               'explanation': {'anyOf': [{'maxLength': 1000, 'type': 'string'},
                                                         {'type': 'null'}],
                                               'default': None,
                                               'description': 'Why the plan changed, in one sentence '
                                                              '(optional).'}},
                'required': ['plan'],
                'type': 'object'}}

SCHEMAS['ask_user'] = {'fingerprint': '17a987ee0be0a727',
 'parameters': {'additionalProperties': False,
                'properties': {'question': {'description': 'The question, in one or two sentences.',
                                            'maxLength': 2000,
                                            'minLength': 1,
                                            'type': 'string'},
                               'options': {'anyOf': [{'items': {'maxLength': 200,
                                                                'minLength': 1,
                                                                'type': 'string'},
                                                      'maxItems': 9,
                                                      'type': 'array'},
                                                     {'type': 'null'}],
                                           'default': None,
                                           'description': 'Up to 9 short answers the user can pick (keys '
                                                          '1-9).'},
                               'allow_free_text': {'default': True,
                                                   'description': 'Whether the user may type an answer of '
                                                                  'their own instead of picking an option.',
                                                   'type': 'boolean'}},
                'required': ['question'],
                'type': 'object'}}
