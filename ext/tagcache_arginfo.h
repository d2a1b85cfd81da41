/* This is a generated file, edit the .stub.php file instead.
 * Stub hash: 2a6e81abd9a6cb1701c621d74aadc8df7012d1e4 */

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_TagCache_Backend_setDirectives, 0, 1, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, directives, IS_ARRAY, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_TagCache_Backend_getOption, 0, 1, IS_MIXED, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_TagCache_Backend_setOption, 0, 2, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, value, IS_MIXED, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_MASK_EX(arginfo_class_TagCache_Backend_load, 0, 1, MAY_BE_STRING|MAY_BE_FALSE)
	ZEND_ARG_TYPE_INFO(0, id, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, doNotTestCacheValidity, _IS_BOOL, 0, "false")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_TagCache_Backend_loadMany, 0, 1, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO(0, ids, IS_ARRAY, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_MASK_EX(arginfo_class_TagCache_Backend_test, 0, 1, MAY_BE_LONG|MAY_BE_FALSE)
	ZEND_ARG_TYPE_INFO(0, id, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_TagCache_Backend_save, 0, 2, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, data, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, id, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, tags, IS_ARRAY, 0, "[]")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, specificLifetime, IS_MIXED, 0, "false")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_TagCache_Backend_remove, 0, 1, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, id, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_TagCache_Backend_clean, 0, 0, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, mode, IS_STRING, 0, "\"all\"")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, tags, IS_ARRAY, 0, "[]")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_TagCache_Backend_getIds, 0, 0, IS_ARRAY, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_TagCache_Backend_getTags arginfo_class_TagCache_Backend_getIds

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_TagCache_Backend_getIdsMatchingTags, 0, 0, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, tags, IS_ARRAY, 0, "[]")
ZEND_END_ARG_INFO()

#define arginfo_class_TagCache_Backend_getIdsNotMatchingTags arginfo_class_TagCache_Backend_getIdsMatchingTags

#define arginfo_class_TagCache_Backend_getIdsMatchingAnyTags arginfo_class_TagCache_Backend_getIdsMatchingTags

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_TagCache_Backend_getFillingPercentage, 0, 0, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_MASK_EX(arginfo_class_TagCache_Backend_getMetadatas, 0, 1, MAY_BE_ARRAY|MAY_BE_FALSE)
	ZEND_ARG_TYPE_INFO(0, id, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_TagCache_Backend_touch, 0, 2, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, id, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, extraLifetime, IS_LONG, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_TagCache_Backend_getCapabilities arginfo_class_TagCache_Backend_getIds

#define arginfo_class_TagCache_Backend_stats arginfo_class_TagCache_Backend_getIds

#define arginfo_class_TagCache_Backend_verify arginfo_class_TagCache_Backend_getIds

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_TagCache_Backend____expire, 0, 1, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, id, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_INFO_EX(arginfo_class_TagCache_AbstractBackend___construct, 0, 0, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, options, IS_ARRAY, 0, "[]")
ZEND_END_ARG_INFO()

#define arginfo_class_TagCache_AbstractBackend_setDirectives arginfo_class_TagCache_Backend_setDirectives

#define arginfo_class_TagCache_AbstractBackend_getOption arginfo_class_TagCache_Backend_getOption

#define arginfo_class_TagCache_AbstractBackend_setOption arginfo_class_TagCache_Backend_setOption

#define arginfo_class_TagCache_AbstractBackend_load arginfo_class_TagCache_Backend_load

#define arginfo_class_TagCache_AbstractBackend_loadMany arginfo_class_TagCache_Backend_loadMany

#define arginfo_class_TagCache_AbstractBackend_test arginfo_class_TagCache_Backend_test

#define arginfo_class_TagCache_AbstractBackend_save arginfo_class_TagCache_Backend_save

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_TagCache_AbstractBackend_remember, 0, 2, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, id, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, build, IS_CALLABLE, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, tags, IS_ARRAY, 0, "[]")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, lifetime, IS_MIXED, 0, "false")
ZEND_END_ARG_INFO()

#define arginfo_class_TagCache_AbstractBackend_remove arginfo_class_TagCache_Backend_remove

#define arginfo_class_TagCache_AbstractBackend_clean arginfo_class_TagCache_Backend_clean

#define arginfo_class_TagCache_AbstractBackend_getIds arginfo_class_TagCache_Backend_getIds

#define arginfo_class_TagCache_AbstractBackend_getTags arginfo_class_TagCache_Backend_getIds

#define arginfo_class_TagCache_AbstractBackend_getIdsMatchingTags arginfo_class_TagCache_Backend_getIdsMatchingTags

#define arginfo_class_TagCache_AbstractBackend_getIdsNotMatchingTags arginfo_class_TagCache_Backend_getIdsMatchingTags

#define arginfo_class_TagCache_AbstractBackend_getIdsMatchingAnyTags arginfo_class_TagCache_Backend_getIdsMatchingTags

#define arginfo_class_TagCache_AbstractBackend_getFillingPercentage arginfo_class_TagCache_Backend_getFillingPercentage

#define arginfo_class_TagCache_AbstractBackend_getMetadatas arginfo_class_TagCache_Backend_getMetadatas

#define arginfo_class_TagCache_AbstractBackend_touch arginfo_class_TagCache_Backend_touch

#define arginfo_class_TagCache_AbstractBackend_getCapabilities arginfo_class_TagCache_Backend_getIds

#define arginfo_class_TagCache_AbstractBackend_stats arginfo_class_TagCache_Backend_getIds

#define arginfo_class_TagCache_AbstractBackend_verify arginfo_class_TagCache_Backend_getIds

#define arginfo_class_TagCache_AbstractBackend____expire arginfo_class_TagCache_Backend____expire

#define arginfo_class_TagCache_AbstractBackend___serialize arginfo_class_TagCache_Backend_getIds

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_TagCache_AbstractBackend___unserialize, 0, 1, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, data, IS_ARRAY, 0)
ZEND_END_ARG_INFO()


ZEND_METHOD(TagCache_AbstractBackend, __construct);
ZEND_METHOD(TagCache_AbstractBackend, setDirectives);
ZEND_METHOD(TagCache_AbstractBackend, getOption);
ZEND_METHOD(TagCache_AbstractBackend, setOption);
ZEND_METHOD(TagCache_AbstractBackend, load);
ZEND_METHOD(TagCache_AbstractBackend, loadMany);
ZEND_METHOD(TagCache_AbstractBackend, test);
ZEND_METHOD(TagCache_AbstractBackend, save);
ZEND_METHOD(TagCache_AbstractBackend, remember);
ZEND_METHOD(TagCache_AbstractBackend, remove);
ZEND_METHOD(TagCache_AbstractBackend, clean);
ZEND_METHOD(TagCache_AbstractBackend, getIds);
ZEND_METHOD(TagCache_AbstractBackend, getTags);
ZEND_METHOD(TagCache_AbstractBackend, getIdsMatchingTags);
ZEND_METHOD(TagCache_AbstractBackend, getIdsNotMatchingTags);
ZEND_METHOD(TagCache_AbstractBackend, getIdsMatchingAnyTags);
ZEND_METHOD(TagCache_AbstractBackend, getFillingPercentage);
ZEND_METHOD(TagCache_AbstractBackend, getMetadatas);
ZEND_METHOD(TagCache_AbstractBackend, touch);
ZEND_METHOD(TagCache_AbstractBackend, getCapabilities);
ZEND_METHOD(TagCache_AbstractBackend, stats);
ZEND_METHOD(TagCache_AbstractBackend, verify);
ZEND_METHOD(TagCache_AbstractBackend, ___expire);
ZEND_METHOD(TagCache_AbstractBackend, __serialize);
ZEND_METHOD(TagCache_AbstractBackend, __unserialize);


static const zend_function_entry class_TagCache_Exception_methods[] = {
	ZEND_FE_END
};


static const zend_function_entry class_TagCache_ConfigurationException_methods[] = {
	ZEND_FE_END
};


static const zend_function_entry class_TagCache_StorageException_methods[] = {
	ZEND_FE_END
};


static const zend_function_entry class_TagCache_ConnectionException_methods[] = {
	ZEND_FE_END
};


static const zend_function_entry class_TagCache_Backend_methods[] = {
	ZEND_ABSTRACT_ME_WITH_FLAGS(TagCache_Backend, setDirectives, arginfo_class_TagCache_Backend_setDirectives, ZEND_ACC_PUBLIC|ZEND_ACC_ABSTRACT)
	ZEND_ABSTRACT_ME_WITH_FLAGS(TagCache_Backend, getOption, arginfo_class_TagCache_Backend_getOption, ZEND_ACC_PUBLIC|ZEND_ACC_ABSTRACT)
	ZEND_ABSTRACT_ME_WITH_FLAGS(TagCache_Backend, setOption, arginfo_class_TagCache_Backend_setOption, ZEND_ACC_PUBLIC|ZEND_ACC_ABSTRACT)
	ZEND_ABSTRACT_ME_WITH_FLAGS(TagCache_Backend, load, arginfo_class_TagCache_Backend_load, ZEND_ACC_PUBLIC|ZEND_ACC_ABSTRACT)
	ZEND_ABSTRACT_ME_WITH_FLAGS(TagCache_Backend, loadMany, arginfo_class_TagCache_Backend_loadMany, ZEND_ACC_PUBLIC|ZEND_ACC_ABSTRACT)
	ZEND_ABSTRACT_ME_WITH_FLAGS(TagCache_Backend, test, arginfo_class_TagCache_Backend_test, ZEND_ACC_PUBLIC|ZEND_ACC_ABSTRACT)
	ZEND_ABSTRACT_ME_WITH_FLAGS(TagCache_Backend, save, arginfo_class_TagCache_Backend_save, ZEND_ACC_PUBLIC|ZEND_ACC_ABSTRACT)
	ZEND_ABSTRACT_ME_WITH_FLAGS(TagCache_Backend, remove, arginfo_class_TagCache_Backend_remove, ZEND_ACC_PUBLIC|ZEND_ACC_ABSTRACT)
	ZEND_ABSTRACT_ME_WITH_FLAGS(TagCache_Backend, clean, arginfo_class_TagCache_Backend_clean, ZEND_ACC_PUBLIC|ZEND_ACC_ABSTRACT)
	ZEND_ABSTRACT_ME_WITH_FLAGS(TagCache_Backend, getIds, arginfo_class_TagCache_Backend_getIds, ZEND_ACC_PUBLIC|ZEND_ACC_ABSTRACT)
	ZEND_ABSTRACT_ME_WITH_FLAGS(TagCache_Backend, getTags, arginfo_class_TagCache_Backend_getTags, ZEND_ACC_PUBLIC|ZEND_ACC_ABSTRACT)
	ZEND_ABSTRACT_ME_WITH_FLAGS(TagCache_Backend, getIdsMatchingTags, arginfo_class_TagCache_Backend_getIdsMatchingTags, ZEND_ACC_PUBLIC|ZEND_ACC_ABSTRACT)
	ZEND_ABSTRACT_ME_WITH_FLAGS(TagCache_Backend, getIdsNotMatchingTags, arginfo_class_TagCache_Backend_getIdsNotMatchingTags, ZEND_ACC_PUBLIC|ZEND_ACC_ABSTRACT)
	ZEND_ABSTRACT_ME_WITH_FLAGS(TagCache_Backend, getIdsMatchingAnyTags, arginfo_class_TagCache_Backend_getIdsMatchingAnyTags, ZEND_ACC_PUBLIC|ZEND_ACC_ABSTRACT)
	ZEND_ABSTRACT_ME_WITH_FLAGS(TagCache_Backend, getFillingPercentage, arginfo_class_TagCache_Backend_getFillingPercentage, ZEND_ACC_PUBLIC|ZEND_ACC_ABSTRACT)
	ZEND_ABSTRACT_ME_WITH_FLAGS(TagCache_Backend, getMetadatas, arginfo_class_TagCache_Backend_getMetadatas, ZEND_ACC_PUBLIC|ZEND_ACC_ABSTRACT)
	ZEND_ABSTRACT_ME_WITH_FLAGS(TagCache_Backend, touch, arginfo_class_TagCache_Backend_touch, ZEND_ACC_PUBLIC|ZEND_ACC_ABSTRACT)
	ZEND_ABSTRACT_ME_WITH_FLAGS(TagCache_Backend, getCapabilities, arginfo_class_TagCache_Backend_getCapabilities, ZEND_ACC_PUBLIC|ZEND_ACC_ABSTRACT)
	ZEND_ABSTRACT_ME_WITH_FLAGS(TagCache_Backend, stats, arginfo_class_TagCache_Backend_stats, ZEND_ACC_PUBLIC|ZEND_ACC_ABSTRACT)
	ZEND_ABSTRACT_ME_WITH_FLAGS(TagCache_Backend, verify, arginfo_class_TagCache_Backend_verify, ZEND_ACC_PUBLIC|ZEND_ACC_ABSTRACT)
	ZEND_ABSTRACT_ME_WITH_FLAGS(TagCache_Backend, ___expire, arginfo_class_TagCache_Backend____expire, ZEND_ACC_PUBLIC|ZEND_ACC_ABSTRACT)
	ZEND_FE_END
};


static const zend_function_entry class_TagCache_AbstractBackend_methods[] = {
	ZEND_ME(TagCache_AbstractBackend, __construct, arginfo_class_TagCache_AbstractBackend___construct, ZEND_ACC_PUBLIC)
	ZEND_ME(TagCache_AbstractBackend, setDirectives, arginfo_class_TagCache_AbstractBackend_setDirectives, ZEND_ACC_PUBLIC)
	ZEND_ME(TagCache_AbstractBackend, getOption, arginfo_class_TagCache_AbstractBackend_getOption, ZEND_ACC_PUBLIC)
	ZEND_ME(TagCache_AbstractBackend, setOption, arginfo_class_TagCache_AbstractBackend_setOption, ZEND_ACC_PUBLIC)
	ZEND_ME(TagCache_AbstractBackend, load, arginfo_class_TagCache_AbstractBackend_load, ZEND_ACC_PUBLIC)
	ZEND_ME(TagCache_AbstractBackend, loadMany, arginfo_class_TagCache_AbstractBackend_loadMany, ZEND_ACC_PUBLIC)
	ZEND_ME(TagCache_AbstractBackend, test, arginfo_class_TagCache_AbstractBackend_test, ZEND_ACC_PUBLIC)
	ZEND_ME(TagCache_AbstractBackend, save, arginfo_class_TagCache_AbstractBackend_save, ZEND_ACC_PUBLIC)
	ZEND_ME(TagCache_AbstractBackend, remember, arginfo_class_TagCache_AbstractBackend_remember, ZEND_ACC_PUBLIC)
	ZEND_ME(TagCache_AbstractBackend, remove, arginfo_class_TagCache_AbstractBackend_remove, ZEND_ACC_PUBLIC)
	ZEND_ME(TagCache_AbstractBackend, clean, arginfo_class_TagCache_AbstractBackend_clean, ZEND_ACC_PUBLIC)
	ZEND_ME(TagCache_AbstractBackend, getIds, arginfo_class_TagCache_AbstractBackend_getIds, ZEND_ACC_PUBLIC)
	ZEND_ME(TagCache_AbstractBackend, getTags, arginfo_class_TagCache_AbstractBackend_getTags, ZEND_ACC_PUBLIC)
	ZEND_ME(TagCache_AbstractBackend, getIdsMatchingTags, arginfo_class_TagCache_AbstractBackend_getIdsMatchingTags, ZEND_ACC_PUBLIC)
	ZEND_ME(TagCache_AbstractBackend, getIdsNotMatchingTags, arginfo_class_TagCache_AbstractBackend_getIdsNotMatchingTags, ZEND_ACC_PUBLIC)
	ZEND_ME(TagCache_AbstractBackend, getIdsMatchingAnyTags, arginfo_class_TagCache_AbstractBackend_getIdsMatchingAnyTags, ZEND_ACC_PUBLIC)
	ZEND_ME(TagCache_AbstractBackend, getFillingPercentage, arginfo_class_TagCache_AbstractBackend_getFillingPercentage, ZEND_ACC_PUBLIC)
	ZEND_ME(TagCache_AbstractBackend, getMetadatas, arginfo_class_TagCache_AbstractBackend_getMetadatas, ZEND_ACC_PUBLIC)
	ZEND_ME(TagCache_AbstractBackend, touch, arginfo_class_TagCache_AbstractBackend_touch, ZEND_ACC_PUBLIC)
	ZEND_ME(TagCache_AbstractBackend, getCapabilities, arginfo_class_TagCache_AbstractBackend_getCapabilities, ZEND_ACC_PUBLIC)
	ZEND_ME(TagCache_AbstractBackend, stats, arginfo_class_TagCache_AbstractBackend_stats, ZEND_ACC_PUBLIC)
	ZEND_ME(TagCache_AbstractBackend, verify, arginfo_class_TagCache_AbstractBackend_verify, ZEND_ACC_PUBLIC)
	ZEND_ME(TagCache_AbstractBackend, ___expire, arginfo_class_TagCache_AbstractBackend____expire, ZEND_ACC_PUBLIC)
	ZEND_ME(TagCache_AbstractBackend, __serialize, arginfo_class_TagCache_AbstractBackend___serialize, ZEND_ACC_PUBLIC)
	ZEND_ME(TagCache_AbstractBackend, __unserialize, arginfo_class_TagCache_AbstractBackend___unserialize, ZEND_ACC_PUBLIC)
	ZEND_FE_END
};

static zend_class_entry *register_class_TagCache_Exception(zend_class_entry *class_entry_RuntimeException)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "TagCache", "Exception", class_TagCache_Exception_methods);
	class_entry = zend_register_internal_class_ex(&ce, class_entry_RuntimeException);

	return class_entry;
}

static zend_class_entry *register_class_TagCache_ConfigurationException(zend_class_entry *class_entry_TagCache_Exception)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "TagCache", "ConfigurationException", class_TagCache_ConfigurationException_methods);
	class_entry = zend_register_internal_class_ex(&ce, class_entry_TagCache_Exception);

	return class_entry;
}

static zend_class_entry *register_class_TagCache_StorageException(zend_class_entry *class_entry_TagCache_Exception)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "TagCache", "StorageException", class_TagCache_StorageException_methods);
	class_entry = zend_register_internal_class_ex(&ce, class_entry_TagCache_Exception);

	return class_entry;
}

static zend_class_entry *register_class_TagCache_ConnectionException(zend_class_entry *class_entry_TagCache_Exception)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "TagCache", "ConnectionException", class_TagCache_ConnectionException_methods);
	class_entry = zend_register_internal_class_ex(&ce, class_entry_TagCache_Exception);

	return class_entry;
}

static zend_class_entry *register_class_TagCache_Backend(void)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "TagCache", "Backend", class_TagCache_Backend_methods);
	class_entry = zend_register_internal_interface(&ce);

	zval const_CLEANING_MODE_ALL_value;
	zend_string *const_CLEANING_MODE_ALL_value_str = zend_string_init("all", strlen("all"), 1);
	ZVAL_STR(&const_CLEANING_MODE_ALL_value, const_CLEANING_MODE_ALL_value_str);
	zend_string *const_CLEANING_MODE_ALL_name = zend_string_init_interned("CLEANING_MODE_ALL", sizeof("CLEANING_MODE_ALL") - 1, 1);
	zend_declare_class_constant_ex(class_entry, const_CLEANING_MODE_ALL_name, &const_CLEANING_MODE_ALL_value, ZEND_ACC_PUBLIC, NULL);
	zend_string_release(const_CLEANING_MODE_ALL_name);

	zval const_CLEANING_MODE_OLD_value;
	zend_string *const_CLEANING_MODE_OLD_value_str = zend_string_init("old", strlen("old"), 1);
	ZVAL_STR(&const_CLEANING_MODE_OLD_value, const_CLEANING_MODE_OLD_value_str);
	zend_string *const_CLEANING_MODE_OLD_name = zend_string_init_interned("CLEANING_MODE_OLD", sizeof("CLEANING_MODE_OLD") - 1, 1);
	zend_declare_class_constant_ex(class_entry, const_CLEANING_MODE_OLD_name, &const_CLEANING_MODE_OLD_value, ZEND_ACC_PUBLIC, NULL);
	zend_string_release(const_CLEANING_MODE_OLD_name);

	zval const_CLEANING_MODE_MATCHING_TAG_value;
	zend_string *const_CLEANING_MODE_MATCHING_TAG_value_str = zend_string_init("matchingTag", strlen("matchingTag"), 1);
	ZVAL_STR(&const_CLEANING_MODE_MATCHING_TAG_value, const_CLEANING_MODE_MATCHING_TAG_value_str);
	zend_string *const_CLEANING_MODE_MATCHING_TAG_name = zend_string_init_interned("CLEANING_MODE_MATCHING_TAG", sizeof("CLEANING_MODE_MATCHING_TAG") - 1, 1);
	zend_declare_class_constant_ex(class_entry, const_CLEANING_MODE_MATCHING_TAG_name, &const_CLEANING_MODE_MATCHING_TAG_value, ZEND_ACC_PUBLIC, NULL);
	zend_string_release(const_CLEANING_MODE_MATCHING_TAG_name);

	zval const_CLEANING_MODE_NOT_MATCHING_TAG_value;
	zend_string *const_CLEANING_MODE_NOT_MATCHING_TAG_value_str = zend_string_init("notMatchingTag", strlen("notMatchingTag"), 1);
	ZVAL_STR(&const_CLEANING_MODE_NOT_MATCHING_TAG_value, const_CLEANING_MODE_NOT_MATCHING_TAG_value_str);
	zend_string *const_CLEANING_MODE_NOT_MATCHING_TAG_name = zend_string_init_interned("CLEANING_MODE_NOT_MATCHING_TAG", sizeof("CLEANING_MODE_NOT_MATCHING_TAG") - 1, 1);
	zend_declare_class_constant_ex(class_entry, const_CLEANING_MODE_NOT_MATCHING_TAG_name, &const_CLEANING_MODE_NOT_MATCHING_TAG_value, ZEND_ACC_PUBLIC, NULL);
	zend_string_release(const_CLEANING_MODE_NOT_MATCHING_TAG_name);

	zval const_CLEANING_MODE_MATCHING_ANY_TAG_value;
	zend_string *const_CLEANING_MODE_MATCHING_ANY_TAG_value_str = zend_string_init("matchingAnyTag", strlen("matchingAnyTag"), 1);
	ZVAL_STR(&const_CLEANING_MODE_MATCHING_ANY_TAG_value, const_CLEANING_MODE_MATCHING_ANY_TAG_value_str);
	zend_string *const_CLEANING_MODE_MATCHING_ANY_TAG_name = zend_string_init_interned("CLEANING_MODE_MATCHING_ANY_TAG", sizeof("CLEANING_MODE_MATCHING_ANY_TAG") - 1, 1);
	zend_declare_class_constant_ex(class_entry, const_CLEANING_MODE_MATCHING_ANY_TAG_name, &const_CLEANING_MODE_MATCHING_ANY_TAG_value, ZEND_ACC_PUBLIC, NULL);
	zend_string_release(const_CLEANING_MODE_MATCHING_ANY_TAG_name);

	return class_entry;
}

static zend_class_entry *register_class_TagCache_AbstractBackend(zend_class_entry *class_entry_TagCache_Backend)
{
	zend_class_entry ce, *class_entry;

	INIT_NS_CLASS_ENTRY(ce, "TagCache", "AbstractBackend", class_TagCache_AbstractBackend_methods);
	class_entry = zend_register_internal_class_ex(&ce, NULL);
	class_entry->ce_flags |= ZEND_ACC_ABSTRACT;
	zend_class_implements(class_entry, 1, class_entry_TagCache_Backend);
#if (PHP_VERSION_ID >= 80200)


	zend_add_parameter_attribute(zend_hash_str_find_ptr(&class_entry->function_table, "__construct", sizeof("__construct") - 1), 0, ZSTR_KNOWN(ZEND_STR_SENSITIVEPARAMETER), 0);

	zend_add_parameter_attribute(zend_hash_str_find_ptr(&class_entry->function_table, "setoption", sizeof("setoption") - 1), 1, ZSTR_KNOWN(ZEND_STR_SENSITIVEPARAMETER), 0);
#endif

	return class_entry;
}
