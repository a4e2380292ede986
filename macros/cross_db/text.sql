{#- Text similarity (scope rules of metrics.md): token Jaccard = lower-case,
    split on runs of non-alphanumeric characters (Unicode letters and digits),
    no stemming, |A and B| / |A or B| over distinct tokens. Null when either
    text is null; 0 when neither text has a token: lara_token_set_jaccard
    over the lists of lara_tokens.

    lara_tokens(text): the distinct tokens of a text, as a list. -#}
{% macro lara_tokens(text) %}
    {{ return(adapter.dispatch('lara_tokens', 'lara')(text)) }}
{% endmacro %}

{% macro duckdb__lara_tokens(text) -%}
    list_distinct(list_filter(
        regexp_split_to_array(lower({{ text }}), '[^\p{L}\p{N}]+'),
        lambda token: token <> ''
    ))
{%- endmacro %}

{% macro default__lara_tokens(text) -%}
    array_distinct(filter(split(lower({{ text }}), '[^\\p{L}\\p{N}]+'), token -> token <> ''))
{%- endmacro %}

{#- lara_token_set_jaccard(left_tokens, right_tokens): the Jaccard index of two
    token lists made by lara_tokens (tokenise each text once, e.g. in a CTE,
    then compare lists). Null when either is null; 0 when both are empty.
    |A or B| is |A| + |B| - |A and B| (the lists hold distinct tokens), so
    no union list is built; for many pairs, keep the three counts as columns
    and combine them with lara_token_count_jaccard (int_retrieval_research_failures). -#}
{% macro lara_token_set_jaccard(left_tokens, right_tokens) -%}
    {{ lara_token_count_jaccard(
        lara_shared_token_count(left_tokens, right_tokens),
        lara_list_length(left_tokens),
        lara_list_length(right_tokens)
    ) }}
{%- endmacro %}


{#- lara_shared_token_count(left_tokens, right_tokens): |A and B|, the tokens
    two lists made by lara_tokens share; null when either list is null. -#}
{% macro lara_shared_token_count(left_tokens, right_tokens) %}
    {{ return(adapter.dispatch('lara_shared_token_count', 'lara')(left_tokens, right_tokens)) }}
{% endmacro %}

{% macro duckdb__lara_shared_token_count(left_tokens, right_tokens) -%}
    len(list_intersect({{ left_tokens }}, {{ right_tokens }}))
{%- endmacro %}

{% macro default__lara_shared_token_count(left_tokens, right_tokens) -%}
    {{ lara_list_length('array_intersect(' ~ left_tokens ~ ', ' ~ right_tokens ~ ')') }}
{%- endmacro %}


{#- lara_token_count_jaccard(shared_count, left_count, right_count): the
    Jaccard index from the counts of two sets of distinct tokens and of the
    tokens they share: shared / (left + right - shared). Null when either
    count is null; 0 when both sets are empty. -#}
{% macro lara_token_count_jaccard(shared_count, left_count, right_count) -%}
    case
        when {{ left_count }} is null or {{ right_count }} is null then null
        when {{ left_count }} + {{ right_count }} = 0 then 0.0
        else
            {{ shared_count }}
            / ({{ left_count }} + {{ right_count }} - {{ shared_count }})
    end
{%- endmacro %}


{#- Seconds from `start_expression` to `end_expression` (timestamps), as a double. -#}
{% macro lara_seconds_between(start_expression, end_expression) %}
    {{ return(adapter.dispatch('lara_seconds_between', 'lara')(start_expression, end_expression)) }}
{% endmacro %}

{% macro duckdb__lara_seconds_between(start_expression, end_expression) -%}
    (epoch({{ end_expression }}) - epoch({{ start_expression }}))
{%- endmacro %}

{% macro default__lara_seconds_between(start_expression, end_expression) -%}
    (unix_micros({{ end_expression }}) - unix_micros({{ start_expression }})) / 1000000.0
{%- endmacro %}


{#- Microseconds since the Unix epoch of a timestamp, as a bigint (an exact
    numeric order key, e.g. for range window frames). -#}
{% macro lara_epoch_microseconds(expression) %}
    {{ return(adapter.dispatch('lara_epoch_microseconds', 'lara')(expression)) }}
{% endmacro %}

{% macro duckdb__lara_epoch_microseconds(expression) -%}
    epoch_us({{ expression }})
{%- endmacro %}

{% macro default__lara_epoch_microseconds(expression) -%}
    unix_micros({{ expression }})
{%- endmacro %}

{#- The timestamp of a number of microseconds since the Unix epoch: the inverse
    of lara_epoch_microseconds, exact (a timestamp carried through a sort as
    its bigint and turned back). -#}
{% macro lara_timestamp_from_epoch_microseconds(expression) %}
    {{ return(adapter.dispatch('lara_timestamp_from_epoch_microseconds', 'lara')(expression)) }}
{% endmacro %}

{% macro duckdb__lara_timestamp_from_epoch_microseconds(expression) -%}
    make_timestamp({{ expression }})
{%- endmacro %}

{% macro default__lara_timestamp_from_epoch_microseconds(expression) -%}
    timestamp_micros({{ expression }})
{%- endmacro %}
